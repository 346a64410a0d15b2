import BackbeatCore
import BackbeatKafka
import ServiceLifecycle

/// Keeps the ingest's gauges up to date (`/metrics`):
/// every second, or every `--flush-interval` when that is shorter, until a graceful shutdown.
struct IngestGauges: Service {
    let ingest: IngestService

    func run() async throws {
        let period = min(ingest.configuration.flushInterval, .seconds(1))
        var forgottenSeen = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if let consumer = ingest.consumer.withLock({ $0 }) {
                let forgotten = ingest.recordGauges(consumer)
                if forgotten > forgottenSeen {
                    ingest.logger.warning("the dedup windows are over --dedup-budget: ids nearest their expiry were forgotten early, and a resend of one of them is counted again", metadata: [
                        "forgotten": "\(forgotten - forgottenSeen)", "budget_bytes": "\(ingest.configuration.dedupBudgetBytes)"])
                    forgottenSeen = forgotten
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: period) }
        }
    }
}

extension IngestService {
    /// Updates the gauges of `/metrics`: lag of each owned partition (its high watermark as last fetched, less the
    /// offset stored in PostgreSQL: what is not yet flushed), unflushed bytes, pause state, ids the dedup windows hold and memory held.
    /// Answers the ids forgotten early for the dedup budget since the start.
    fileprivate func recordGauges(_ consumer: KafkaConsumer) -> Int {
        let (stored, trail, waiting, dedupIDs, forgotten) = state.withLock {
            ($0.ledger.storedOffsets, $0.ledger.storedOffsetTrail, $0.ledger.waitingGaps.count, $0.ledger.dedupIDCount,
             $0.ledger.idsForgottenEarly)
        }
        metrics.recordDedupForgotten(total: forgotten)
        let now = Self.now()
        metrics.recordStoredOffsetTrail(
            messages: trail.values.map(\.messages).max() ?? 0,
            seconds: trail.values.compactMap(\.since).map { Double(now.microseconds - $0.microseconds) / 1_000_000 }.max() ?? 0,
            waitingPartitions: waiting)
        var lag: [TopicPartition: Int64] = [:]
        for (partition, offset) in stored {
            guard let watermarks = consumer.cachedWatermarks(partition) else { continue }
            lag[partition] = max(0, watermarks.high - (offset ?? watermarks.low))
        }
        metrics.recordLag(lag)
        let state = backpressure
        metrics.recordIngestState(pendingBytes: state.pendingBytes, paused: state.paused, dedupIDs: dedupIDs)
        if let footprint = memory?.footprint() {
            metrics.recordMemory(dayBuckets: footprint.daysHeld, bytes: footprint.bytes)
        }
        return forgotten
    }
}
