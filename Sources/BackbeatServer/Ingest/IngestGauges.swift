import BackbeatCore
import BackbeatKafka
import ServiceLifecycle

/// Keeps the ingest's gauges up to date (`/metrics`):
/// every second, or every `--flush-interval` when that is shorter, until a graceful shutdown.
struct IngestGauges: Service {
    let ingest: IngestService

    func run() async throws {
        let period = min(ingest.configuration.flushInterval, .seconds(1))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if let consumer = ingest.consumer.withLock({ $0 }) { ingest.recordGauges(consumer) }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: period) }
        }
    }
}

extension IngestService {
    /// Updates the gauges of `/metrics`: lag of each owned partition (its high watermark as last fetched, less the
    /// offset stored in PostgreSQL: what is not yet flushed), unflushed bytes, pause state and memory held.
    fileprivate func recordGauges(_ consumer: KafkaConsumer) {
        let (stored, trail, waiting) = state.withLock { ($0.ledger.storedOffsets, $0.ledger.storedOffsetTrail, $0.ledger.waitingGaps.count) }
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
        metrics.recordIngestState(pendingBytes: state.pendingBytes, paused: state.paused)
        if let footprint = memory?.footprint() {
            metrics.recordMemory(dayBuckets: footprint.daysHeld, bytes: footprint.bytes)
        }
    }
}
