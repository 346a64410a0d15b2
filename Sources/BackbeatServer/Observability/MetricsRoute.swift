import Hummingbird
import NIOCore

/// `GET /metrics`: every metric in the Prometheus text format, without a token (it holds no artist's numbers:
/// its labels are topics, partitions, rejection reasons, route patterns and status codes).
struct MetricsRoute<Context: RequestContext>: Sendable {
    let metrics: ServiceMetrics

    func add(to router: Router<Context>) {
        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
    }
}
