import BackbeatCore
import BackbeatStore
import Foundation
import Hummingbird
import Synchronization

/// `GET /healthz` (the process is up) and `GET /readyz` (Kafka and PostgreSQL answer; ingestion not paused by
/// backpressure nor waiting at a gap; the gaps found since the start), without a token.
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
        /// Owned partitions waiting for `backbeat offsets reset` at a gap (`--offset-gap-policy stop`).
        var waiting_partitions: [Gap]
        /// The latest gaps this instance found since it started (messages the broker deleted unread), latest last.
        var offset_gaps: [Gap]
    }

    /// An `OffsetGap` as `/readyz` shows it.
    struct Gap: Encodable {
        var topic: String
        var partition: Int32
        var first_missing: Int64
        /// nil: the position was past the log's end.
        var last_missing: Int64?
        var log_start: Int64
        var log_end: Int64
        var detected_at: String
        /// Where consumption went on from (nil: waiting).
        var resumed_from: Int64?

        init(_ gap: OffsetGap) {
            topic = gap.topicPartition.topic
            partition = gap.topicPartition.partition
            first_missing = gap.firstMissing
            last_missing = gap.lastMissing
            log_start = gap.logStart
            log_end = gap.logEnd
            detected_at = RFC3339.format(gap.detectedAt)
            resumed_from = gap.resumedAt
        }
    }

    func add(to router: Router<Context>) {
        router.get("healthz") { _, _ in ["status": "ok"] }
        router.get("readyz") { _, _ -> Response in
            let backpressure = ingest?.backpressure ?? (paused: false, pendingBytes: 0)
            let gaps = ingest?.offsetGaps ?? (recent: [], waiting: [])
            var readiness = Readiness(status: "ready", postgres: "ok", kafka: "ok",
                                      ingest: backpressure.paused ? "paused" : gaps.waiting.isEmpty ? "consuming" : "waiting_at_gap",
                                      pending_bytes: backpressure.pendingBytes,
                                      waiting_partitions: gaps.waiting.map(Gap.init), offset_gaps: gaps.recent.map(Gap.init))
            if !(await succeeds(within: .seconds(2), { [store] in try await store.ping() })) { readiness.postgres = "unreachable" }
            if let ingest, !(await ingest.isBrokerReachable()) { readiness.kafka = "unreachable" }
            if backpressure.paused || !gaps.waiting.isEmpty { readiness.status = "degraded" }
            if readiness.postgres != "ok" || readiness.kafka != "ok" { readiness.status = "not_ready" }
            let encoded = try JSONEncoder().encode(readiness)
            return Response(
                status: readiness.status == "not_ready" ? .serviceUnavailable : .ok,
                headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: encoded)))
        }
    }
}
