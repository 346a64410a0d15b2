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
    /// Updates the gauges of `/metrics` from the status (`IngestStatus`): lag of each owned partition in messages
    /// and in seconds of event time, the age of the last flush, unflushed bytes, pause state, ids the dedup windows
    /// hold and memory held; and how far the stored offsets trail. Answers the ids forgotten early for the dedup
    /// budget since the start.
    fileprivate func recordGauges(_ consumer: KafkaConsumer) -> Int {
        let status = status(consumer: consumer)
        let trail = state.read { $0.ledger.storedOffsetTrail }
        metrics.recordDedupForgotten(total: status.dedupIDsForgottenEarly)
        let now = Self.now()
        metrics.recordStoredOffsetTrail(
            messages: trail.values.map(\.messages).max() ?? 0,
            seconds: trail.values.compactMap(\.since).map { Double(now.microseconds - $0.microseconds) / 1_000_000 }.max() ?? 0,
            waitingPartitions: status.partitions.count(where: \.waitingAtGap))
        metrics.recordPerPartition(ServiceMetrics.lagMessages, status.partitions.compactMap { partition in
            partition.lagMessages.map { (partition.topicPartition, Double($0)) }
        })
        metrics.recordPerPartition(ServiceMetrics.eventTimeLag, status.partitions.compactMap { partition in
            partition.eventTimeLagSeconds.map { (partition.topicPartition, $0) }
        })
        metrics.recordIngestState(
            pendingBytes: status.pendingBytes, paused: status.paused, dedupIDs: status.dedupIDs, dedupBytes: status.dedupBytes,
            lastFlushAgeSeconds: status.lastFlushAgeSeconds)
        if let footprint = memory?.footprint() {
            metrics.recordMemory(dayBuckets: footprint.daysHeld, bytes: footprint.bytes)
        }
        return status.dedupIDsForgottenEarly
    }
}
