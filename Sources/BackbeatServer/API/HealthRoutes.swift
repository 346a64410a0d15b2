import BackbeatStore
import Foundation
import Hummingbird

/// `GET /healthz` (the process is up) and `GET /readyz` (Kafka and PostgreSQL answer), without a token.
struct HealthRoutes<Context: RequestContext>: Sendable {
    let store: Store
    let ingest: IngestService?

    struct Readiness: ResponseEncodable {
        var status: String
        var postgres: String
        var kafka: String
    }

    func add(to router: Router<Context>) {
        router.get("healthz") { _, _ in ["status": "ok"] }
        router.get("readyz") { _, _ -> Response in
            var readiness = Readiness(status: "ready", postgres: "ok", kafka: "ok")
            do { try await store.ping() } catch { readiness.postgres = "unreachable" }
            if let ingest, !(await ingest.isBrokerReachable()) { readiness.kafka = "unreachable" }
            if readiness.postgres != "ok" || readiness.kafka != "ok" { readiness.status = "not_ready" }
            let encoded = try JSONEncoder().encode(readiness)
            return Response(
                status: readiness.status == "ready" ? .ok : .serviceUnavailable,
                headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: encoded)))
        }
    }
}
