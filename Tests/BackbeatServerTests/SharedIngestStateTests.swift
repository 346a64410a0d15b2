@testable import BackbeatServer
import BackbeatCore
import BackbeatTestSupport
import Testing

/// The ingest's one state shared by the services: the changes its transitions queue for the in-memory layers are
/// applied by the queue's jobs, one at a time and in the state's order, while polls go on; the polling thread never
/// runs more than `backlogLimit` ahead of them; a flush's flight is exactly its batch however many changes were still
/// queued; and once the queue has run, the pending layer is exactly the ledger's unflushed work.
@Suite struct SharedIngestStateTests {
    static let partitions = (0..<2).map { TopicPartition(topic: "events", partition: $0) }
    static let now = Timestamp(seconds: CivilDate(year: 2026, month: 10, day: 8).daysSinceEpoch * 86_400)

    /// Streams, revenue and social per artist and platform over the generated days: what layers are compared by.
    static func answers(_ layer: CubeMemory?) -> [[QueryRow]] {
        let start = CivilDate(year: 2026, month: 10, day: 1).daysSinceEpoch
        let interval = QueryInterval(from: Timestamp(seconds: start * 86_400), to: Timestamp(seconds: (start + 7) * 86_400))
        let queries = [
            Query(dataset: .streams, interval: interval, granularity: .day, groupBy: [.artistID, .platform]),
            Query(dataset: .revenue, interval: interval, granularity: .all, groupBy: [.artistID]),
            Query(dataset: .social, interval: interval, granularity: .all, groupBy: [.artistID, .action]),
        ]
        return queries.map { query in
            (layer?.rows(for: query) ?? []).sorted { "\($0.periodStart?.seconds ?? 0)\($0.groupValues)" < "\($1.periodStart?.seconds ?? 0)\($1.groupValues)" }
        }
    }

    static func layer(_ delta: InternedDelta) -> CubeMemory {
        var memory = CubeMemory()
        memory.add(delta)
        return memory
    }

    @Test func changesApplyInTheStatesOrderWhilePollsGoOn() async throws {
        let shared = SharedIngestState(IngestState(memory: true))
        shared.change { $0.own(Self.partitions) }
        var generator = EventGenerator(.init(seed: 17, artists: 6, days: 6, start: CivilDate(year: 2026, month: 10, day: 1), tracksPerArtist: 4))
        var offsets: [TopicPartition: Int64] = [:]
        var flushes = 0
        for round in 0..<40 {
            let messages = (0..<300).map { index in
                let partition = Self.partitions[index % Self.partitions.count]
                defer { offsets[partition, default: 0] += 1 }
                return ConsumedMessage(
                    position: MessagePosition(topicPartition: partition, offset: offsets[partition, default: 0]), key: nil, value: generator.next().value)
            }.sorted { ($0.position.topicPartition, $0.position.offset) < ($1.position.topicPartition, $1.position.offset) }
            _ = shared.change { $0.consumed(messages, now: Self.now) }
            shared.keepUp()
            let queued = shared.read { $0.queuedMemoryChanges.count }
            #expect(queued <= SharedIngestState.backlogLimit, "the polling thread keeps up")
            if round % 7 == 6 {
                let started = shared.change { $0.flushStarted() }
                let (batch, flight) = try #require(started)
                let layer = try #require(flight).layer
                #expect(Self.answers(layer) == Self.answers(Self.layer(batch.mergedDelta)), "a flight is exactly its batch")
                #expect(shared.read { $0.queuedMemoryChanges.isEmpty }, "a flush's start applies what is queued first")
                if flushes % 2 == 0 {
                    shared.change { $0.flushCommitted(at: Self.now, flight: flight) }
                } else {
                    shared.change { $0.flushFailed(batch) }
                }
                flushes += 1
            }
        }
        await shared.settled()
        let (queued, layers, ledger) = shared.read { ($0.queuedMemoryChanges.count, $0.layers, $0.ledger) }
        #expect(queued == 0, "every change applied once the queue has run")
        var probe = ledger
        let taken = probe.takeBatch()
        let unflushed = try #require(taken).mergedDelta
        #expect(Self.answers(layers?.pending) == Self.answers(Self.layer(unflushed)), "pending is the ledger's unflushed work")
        #expect(flushes == 5)
    }
}
