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
            if !(await succeeds(within: .seconds(2), { [store] in try await store.ping() })) { readiness.postgres = "unreachable" }
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
}
