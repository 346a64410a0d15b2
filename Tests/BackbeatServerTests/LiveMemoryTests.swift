@testable import BackbeatServer
import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory layers take the ledger's changes on a queue of their own, in the order they were submitted: each
/// transition (consumed, flush started, committed, failed, ownership changed, snapshot installed) leaves the layers
/// as if it had been applied at once, whatever the queue had not applied yet when the next one was submitted
/// (`MemoryLayersTests` checks the transitions themselves against the ledger).
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

    static let p0 = TopicPartition(topic: "events", partition: 0)
    static let p1 = TopicPartition(topic: "events", partition: 1)

    /// Streams, revenue and social per artist and platform over the generated days, from some layers added
    /// together: what the answers are compared by.
    static func answers(_ layers: [CubeMemory]) -> [[QueryRow]] {
        var sum = CubeMemory()
        for layer in layers { sum.add(layer) }
        let interval = QueryInterval(
            from: Timestamp(seconds: start.daysSinceEpoch * 86_400), to: Timestamp(seconds: (start.daysSinceEpoch + 7) * 86_400))
        let queries = [
            Query(dataset: .streams, interval: interval, granularity: .day, groupBy: [.artistID, .platform]),
            Query(dataset: .revenue, interval: interval, granularity: .all, groupBy: [.artistID]),
            Query(dataset: .social, interval: interval, granularity: .all, groupBy: [.artistID, .action]),
        ]
        return queries.map { query in
            (sum.rows(for: query) ?? []).sorted { "\($0.periodStart?.seconds ?? 0)\($0.groupValues)" < "\($1.periodStart?.seconds ?? 0)\($1.groupValues)" }
        }
    }

    /// The cubes of `deltas` added into one layer at once.
    static func layer(_ deltas: [InternedDelta]) -> CubeMemory {
        var memory = CubeMemory()
        for delta in deltas { memory.add(delta) }
        return memory
    }

    static func memory() -> LiveMemory {
        LiveMemory(configuration: MemoryConfiguration())
    }

    @Test func aFlushTakesExactlyWhatWasConsumedBeforeItStarted() async {
        let memory = Self.memory()
        let d = Self.deltas
        memory.consumed([Self.p0: d[0]])
        memory.consumed([Self.p1: d[1]])
        let first = memory.flushStarted()
        memory.consumed([Self.p0: d[2]])
        let second = memory.flushStarted()

        let flight = await first.value()
        #expect(Self.answers(flight.layers) == Self.answers([Self.layer([d[0], d[1]])]))
        #expect(Self.answers(await second.value().layers) == Self.answers([Self.layer([d[2]])]))
        let layers = memory.snapshot()
        #expect(Self.answers(layers.pending) == Self.answers([]))
        #expect(Self.answers(layers.inFlight) == Self.answers([Self.layer([d[2]])]))
    }

    @Test func aFailedFlushReturnsTheCubesOfThePartitionsTheLedgerTookBack() async {
        let memory = Self.memory()
        let d = Self.deltas
        memory.consumed([Self.p0: d[0], Self.p1: d[1]])
        _ = await memory.flushStarted().value()
        memory.consumed([Self.p0: d[2]])
        // The ledger put partition 0's part back; partition 1 was revoked meanwhile.
        memory.flushFailed(restored: [Self.p0])
        memory.consumed([Self.p0: d[3]])

        let retried = await memory.flushStarted().value()
        #expect(Self.answers(retried.layers) == Self.answers([Self.layer([d[0], d[2], d[3]])]))
    }

    @Test func aCommittedFlushJoinsTheDurableLayerUnlessOwnershipChangedMeanwhile() async {
        let memory = Self.memory()
        let d = Self.deltas
        memory.consumed([Self.p0: d[1]])
        await memory.install(Self.layer([d[0]]), sealedDays: 0, droppedDays: 0).value()
        #expect(memory.isComplete)
        #expect(Self.answers(memory.snapshot().pending) == Self.answers([Self.layer([d[1]])]))

        let flight = await memory.flushStarted().value()
        memory.flushCommitted(epoch: flight.epoch)
        var layers = memory.snapshot()
        #expect(Self.answers([layers.durable]) == Self.answers([Self.layer([d[0], d[1]])]))
        #expect(layers.inFlight.isEmpty)

        // A revocation while the next flush is written: memory is no longer complete, the flush's cells stay out
        // of the durable layer, and the partition's pending cubes go with it.
        memory.consumed([Self.p0: d[2], Self.p1: d[3]])
        let next = await memory.flushStarted().value()
        memory.consumed([Self.p0: d[2], Self.p1: d[3]])
        memory.ownershipChanged([Self.p1])
        await memory.settled()
        memory.flushCommitted(epoch: next.epoch)
        layers = memory.snapshot()
        #expect(!layers.complete)
        #expect(layers.inFlight.isEmpty)
        #expect(Self.answers(layers.pending) == Self.answers([Self.layer([d[2]])]))
        #expect(Self.answers([layers.durable]) == Self.answers([Self.layer([d[0], d[1]])]))
    }
}
