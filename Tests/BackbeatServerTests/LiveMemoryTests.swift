@testable import BackbeatServer
import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory layers take the ledger's changes on a queue of their own, in the order they were submitted: each
/// transition (consumed, flush started, committed, failed, ownership changed, snapshot installed) leaves the layers
/// as if it had been applied at once, whatever the queue had not applied yet when the next one was submitted
/// (`MemoryLayersTests` checks the transitions themselves beside the ledger).
@Suite struct LiveMemoryTests {
    static let start = CivilDate(year: 2026, month: 10, day: 1)

    /// Four deltas of generated events, as four polls would consume them.
    static let deltas: [InternedDelta] = {
        var generator = EventGenerator(.init(seed: 11, artists: 5, days: 6, start: start, tracksPerArtist: 4))
        var events: [[Event]] = [[], [], [], []]
        for index in 0..<8_000 {
            guard let event = generator.next().event else { continue }
            events[index % 4].append(event)
        }
        return events.map { InternedDelta(events: $0) }
    }()

    /// Streams, revenue and social per artist and platform over the generated days: what the answers are compared by.
    static func answers(_ layer: CubeMemory?) -> [[QueryRow]] {
        let interval = QueryInterval(
            from: Timestamp(seconds: start.daysSinceEpoch * 86_400), to: Timestamp(seconds: (start.daysSinceEpoch + 7) * 86_400))
        let queries = [
            Query(dataset: .streams, interval: interval, granularity: .day, groupBy: [.artistID, .platform]),
            Query(dataset: .revenue, interval: interval, granularity: .all, groupBy: [.artistID]),
            Query(dataset: .social, interval: interval, granularity: .all, groupBy: [.artistID, .action]),
        ]
        return queries.map { query in
            (layer?.rows(for: query) ?? []).sorted { "\($0.periodStart?.seconds ?? 0)\($0.groupValues)" < "\($1.periodStart?.seconds ?? 0)\($1.groupValues)" }
        }
    }

    /// The cubes of `deltas` added into one layer at once.
    static func layer(_ deltas: [InternedDelta]) -> CubeMemory {
        var memory = CubeMemory()
        for delta in deltas { memory.add(delta) }
        return memory
    }

    static let partition = TopicPartition(topic: "events", partition: 0)

    static func memory() -> LiveMemory {
        LiveMemory(configuration: MemoryConfiguration())
    }

    @Test func aFlushTakesExactlyWhatWasConsumedBeforeItStarted() async throws {
        let memory = Self.memory()
        let d = Self.deltas
        memory.apply([.consumed([Self.partition: d[0]])])
        memory.apply([.consumed([Self.partition: d[1]])])
        let first = memory.apply([.flushStarted])
        memory.apply([.consumed([Self.partition: d[2]])])
        let second = memory.apply([.flushStarted])

        let flight = try #require(await first.value())
        #expect(Self.answers(flight.layer) == Self.answers(Self.layer([d[0], d[1]])))
        #expect(Self.answers(try #require(await second.value()).layer) == Self.answers(Self.layer([d[2]])))
        let layers = memory.snapshot()
        #expect(Self.answers(layers.pending) == Self.answers(CubeMemory()))
        #expect(Self.answers(layers.inFlight) == Self.answers(Self.layer([d[2]])))
    }

    @Test func aFailedFlushMakesItsCubesPendingAgain() async throws {
        let memory = Self.memory()
        let d = Self.deltas
        memory.apply([.consumed([Self.partition: d[0]])])
        _ = try #require(await memory.apply([.flushStarted]).value())
        memory.apply([.consumed([Self.partition: d[1]])])
        // The ledger took the whole batch back: the flight's cubes are pending again, ahead of the second poll's.
        memory.apply([.flushFailed(rebuildingFrom: nil)])
        memory.apply([.consumed([Self.partition: d[2]])])

        let retried = try #require(await memory.apply([.flushStarted]).value())
        #expect(Self.answers(retried.layer) == Self.answers(Self.layer([d[0], d[1], d[2]])))
    }

    @Test func aCommittedFlushJoinsTheDurableLayerEvenWhenItsPartitionChangedHandsMeanwhile() async throws {
        let memory = Self.memory()
        let d = Self.deltas
        memory.apply([.consumed([Self.partition: d[1]])])
        await memory.install(Self.layer([d[0]]), owned: [Self.partition], everyPartition: true, sealedDays: 0, droppedDays: 0).value()
        #expect(memory.isComplete)
        #expect(Self.answers(memory.snapshot().pending) == Self.answers(Self.layer([d[1]])))

        let flight = try #require(await memory.apply([.flushStarted]).value())
        memory.flushCommitted(epoch: flight.epoch)
        var layers = memory.snapshot()
        #expect(Self.answers(layers.durable) == Self.answers(Self.layer([d[0], d[1]])))
        #expect(layers.inFlight == nil)

        // A revocation that drops unflushed work while the next flush is written: memory is no longer complete and no
        // longer covers the partition, pending becomes the ledger's work as the revocation left it, and the flush's
        // cells, durable once it commits, join the durable layer.
        memory.apply([.consumed([Self.partition: d[2]])])
        let next = try #require(await memory.apply([.flushStarted]).value())
        memory.apply([.ownershipChanged([Self.partition], rebuildingFrom: [d[3]])])
        await memory.settled()
        memory.flushCommitted(epoch: next.epoch)
        layers = memory.snapshot()
        #expect(!layers.complete)
        #expect(!layers.covers([Self.partition]))
        #expect(layers.inFlight == nil)
        #expect(Self.answers(layers.pending) == Self.answers(Self.layer([d[3]])))
        #expect(Self.answers(layers.durable) == Self.answers(Self.layer([d[0], d[1], d[2]])))
    }
}
