import BackbeatStore
import Foundation
import Hummingbird
import Synchronization

/// `GET /healthz` (the process is up) and `GET /readyz` (Kafka and PostgreSQL answer; ingestion not paused by
/// backpressure), without a token.
struct HealthRoutes<Context: RequestContext>: Sendable {
    let store: Store
    let ingest: IngestService?

    struct Readiness: ResponseEncodable {
        var status: String
        var postgres: String
        var kafka: String
        /// "consuming", or "paused" while unflushed work is over `--pending-limit`.
        var ingest: String
        var pending_bytes: Int
    }

    func add(to router: Router<Context>) {
        router.get("healthz") { _, _ in ["status": "ok"] }
        router.get("readyz") { _, _ -> Response in
            let backpressure = ingest?.backpressure ?? (paused: false, pendingBytes: 0)
            var readiness = Readiness(status: "ready", postgres: "ok", kafka: "ok",
                                      ingest: backpressure.paused ? "paused" : "consuming", pending_bytes: backpressure.pendingBytes)
            if !(await Self.succeeds(within: .seconds(2), { [store] in try await store.ping() })) { readiness.postgres = "unreachable" }
            if let ingest, !(await ingest.isBrokerReachable()) { readiness.kafka = "unreachable" }
            if backpressure.paused { readiness.status = "degraded" }
            if readiness.postgres != "ok" || readiness.kafka != "ok" { readiness.status = "not_ready" }
            let encoded = try JSONEncoder().encode(readiness)
            return Response(
                status: readiness.status == "not_ready" ? .serviceUnavailable : .ok,
                headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: encoded)))
        }
    }

    /// Whether `body` finishes without error within `limit`. A probe must answer even when a connection attempt
    /// hangs (PostgreSQL down: the pool keeps trying), so the body runs in its own task and is left to finish.
    static func succeeds(within limit: Duration, _ body: @escaping @Sendable () async throws -> Void) async -> Bool {
        let outcome = FirstOutcome()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            outcome.continuation = continuation
            Task { outcome.settle((try? await body()) != nil) }
            Task {
                try? await Task.sleep(for: limit)
                outcome.settle(false)
            }
        }
    }
}

/// Resumes a continuation with the first of several racing outcomes.
private final class FirstOutcome: @unchecked Sendable {
    // @unchecked: `continuation` is set before either racer starts and only read under `settled`'s exchange.
    var continuation: CheckedContinuation<Bool, Never>?
    private let settled = Atomic<Bool>(false)

    func settle(_ value: Bool) {
        guard settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        continuation?.resume(returning: value)
    }
}
