@testable import BackbeatServer
import BackbeatCore
import BackbeatStore
import BackbeatTestSupport
import Testing

/// An ingest driven by hand through the transitions its services run, without Kafka: ownership, polls, flushes to
/// PostgreSQL and snapshots installed go through the one state as they do in `serve`.
extension IngestService {
    /// Owns `partitions` from the stored offsets `stored`, as the source does after an assignment (read, then seek).
    func own(_ partitions: [TopicPartition], stored: [TopicPartition: Int64] = [:]) {
        change { $0.own(partitions, stored: stored) }
    }

    /// Consumes `events` on `partition` from `offset` on, as one poll.
    func consume(_ events: [Event], on partition: TopicPartition, from offset: Int64) {
        let messages = events.enumerated().map { index, event in
            ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: offset + Int64(index)), key: nil,
                            value: Array(EventEncoder.json(event).utf8))
        }
        _ = change { $0.consumed(messages, now: Self.now()) }
    }

    /// Starts a flush (nil: nothing unflushed), as the flusher does.
    func startFlush() -> (batch: FlushBatch, flight: MemoryLayers.Flight?)? {
        change { $0.flushStarted() }
    }

    /// Writes a started flush to PostgreSQL and commits it, as the flusher does.
    func finishFlush(_ started: (batch: FlushBatch, flight: MemoryLayers.Flight?)) async throws {
        let funnel = try await store.write(started.batch)
        let grown = started.flight.flatMap { memory?.grownByCommit(of: $0, funnel: funnel) }
        change { $0.flushCommitted(at: Self.now(), flight: started.flight, grown: grown, funnel: funnel?.artistDays) }
    }

    /// Flushes everything consumed.
    func flushAll() async throws {
        let started = try #require(startFlush())
        try await finishFlush(started)
    }

    /// Installs the stored days from `day` on, owning `owned` (all the partitions): false when the ledger does not
    /// stand at the snapshot's offsets.
    @discardableResult
    func installSnapshot(fromDay day: Int64, owned: Set<TopicPartition>) async throws -> Bool {
        let snapshot = try await store.snapshot(fromDay: day)
        return change { $0.installMemory(snapshot.memory, readAt: snapshot.offsets, owned: owned, everyPartition: true) }
    }
}
