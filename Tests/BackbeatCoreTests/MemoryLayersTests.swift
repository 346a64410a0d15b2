import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory layers driven beside the ledger through every transition of a live ingest (consumed, flush started,
/// committed, failed, assigned, revoked, offset conflict, snapshot installed, rebuild): after each one, the pending
/// cubes are exactly those of the ledger's unflushed work, a flush's cubes exactly those of its batch, and the durable
/// layer exactly what the committed flushes wrote since a snapshot was installed, and `covers` only the partitions
/// owned without a break since.
@Suite struct MemoryLayersTests {
    static let now = RFC3339.parseTimestamp("2026-06-15T12:00:00Z")!
    static let partitions = (0..<3).map { TopicPartition(topic: "events", partition: $0) }

    /// A ledger and the layers, changed together as the ingest changes them, with a generator of messages.
    struct Ingest {
        var ledger = IngestLedger()
        var layers = MemoryLayers()
        var generator = EventGenerator(.init(seed: 5, artists: 5, days: 6, start: CivilDate(year: 2026, month: 6, day: 9), invalidFraction: 0.05))
        var next: [TopicPartition: Int64] = [:]

        /// One poll of `count` messages spread over every partition, owned or not.
        mutating func poll(_ count: Int) {
            var messages: [ConsumedMessage] = []
            for index in 0..<count {
                let partition = MemoryLayersTests.partitions[index % MemoryLayersTests.partitions.count]
                let offset = next[partition, default: 0]
                next[partition] = offset + 1
                messages.append(ConsumedMessage(
                    position: MessagePosition(topicPartition: partition, offset: offset), key: nil, value: generator.next().value))
            }
            // In runs of one partition, as a fetch delivers them, and again interleaved.
            messages.sort { ($0.position.topicPartition, $0.position.offset) < ($1.position.topicPartition, $1.position.offset) }
            layers.consumed(ledger.consume(Array(messages.prefix(count / 2)), now: MemoryLayersTests.now))
            let rest = messages.dropFirst(count / 2).sorted { $0.position.offset < $1.position.offset }
            layers.consumed(ledger.consume(rest, now: MemoryLayersTests.now))
        }

        /// A change of ownership as the ingest applies it: to the ledger, then to the layers, rebuilding pending only
        /// when the change dropped unflushed work.
        mutating func changeOwnership(of partitions: [TopicPartition], _ change: (inout IngestLedger, TopicPartition) -> Void) {
            let dropping = ledger.hasUnflushedWork(partitions)
            for partition in partitions { change(&ledger, partition) }
            layers.ownershipChanged(of: partitions, rebuildingFrom: dropping ? ledger.pendingDeltas : nil)
        }

        /// Takes a batch and starts its flush.
        mutating func startFlush() throws -> (FlushBatch, MemoryLayers.Flight) {
            let taken = ledger.takeBatch()
            let batch = try #require(taken)
            let flight = layers.flushStarted()
            let same = Cells([flight.layer]) == Cells(batch.mergedDelta)
            #expect(same, "a flush's cubes are its batch's")
            return (batch, flight)
        }

        mutating func commit(_ flight: MemoryLayers.Flight) {
            layers.flushCommitted(epoch: flight.epoch, durable: layers.commit(of: flight.epoch)?.grown())
            #expect(layers.inFlight == nil)
        }

        /// A failed flush as the ingest handles it: the ledger takes the batch back, and the layers return its cubes,
        /// or rebuild pending when part of it was not taken back.
        mutating func fail(_ batch: FlushBatch) {
            let whole = ledger.restore(batch).count == batch.parts.count
            layers.flushFailed(rebuildingFrom: whole ? nil : ledger.pendingDeltas)
            #expect(layers.inFlight == nil)
        }

        /// The pending cubes are the cubes of the ledger's unflushed work.
        func expectPendingIsTheLedgersWork(_ comment: Comment) {
            var probe = ledger
            let unflushed = probe.takeBatch()?.mergedDelta ?? InternedDelta()
            let same = Cells([layers.pending]) == Cells(unflushed)
            #expect(same, comment)
            #expect(!unflushed.streams.isEmpty, comment)
        }
    }

    @Test func everyTransitionKeepsTheLayersTheLedgersWork() throws {
        let p = Self.partitions
        var ingest = Ingest()
        ingest.changeOwnership(of: p) { $0.assign($1, storedOffset: nil) }
        ingest.poll(300)
        ingest.expectPendingIsTheLedgersWork("consumed")
        #expect(!ingest.layers.complete)

        // A snapshot installed while nothing is in flight: complete, pending kept as it was.
        #expect(!ingest.layers.covers([]), "nothing installed yet")
        ingest.layers.install(CubeMemory(), owned: Set(p), everyPartition: true)
        #expect(ingest.layers.complete && ingest.layers.covers(Set(p)) && ingest.layers.covers([]))
        ingest.expectPendingIsTheLedgersWork("installed")

        // A flush that commits: its cubes join the durable layer; what was consumed meanwhile stays pending.
        let (first, firstFlight) = try ingest.startFlush()
        #expect(ingest.layers.pending.dayRange == nil)
        ingest.poll(200)
        ingest.expectPendingIsTheLedgersWork("consumed while a flush is in flight")
        ingest.commit(firstFlight)
        var durable = first.mergedDelta
        #expect(Cells([ingest.layers.durable]) == Cells(durable))

        // A flush that fails and is taken back whole: its cubes are pending again, ahead of what came since.
        let (second, _) = try ingest.startFlush()
        ingest.poll(200)
        ingest.fail(second)
        ingest.expectPendingIsTheLedgersWork("failed flush taken back whole")
        #expect(ingest.layers.complete, "a failed flush changes no ownership")

        // A flush that fails while partition 2 is revoked: the ledger takes back partitions 0 and 1 only.
        let (third, _) = try ingest.startFlush()
        ingest.poll(200)
        ingest.changeOwnership(of: [p[2]]) { $0.revoke($1) }
        #expect(!ingest.layers.complete && !ingest.layers.covers([p[2]]) && ingest.layers.covers([p[0], p[1]]))
        ingest.expectPendingIsTheLedgersWork("revoked during a flight")
        ingest.fail(third)
        ingest.expectPendingIsTheLedgersWork("failed flush, one partition revoked")

        // An offset conflict on partition 1: the batch goes back and the partition is dropped as stale.
        let (fourth, _) = try ingest.startFlush()
        ingest.poll(150)
        ingest.ledger.restore(fourth)
        ingest.changeOwnership(of: [p[1]]) { $0.markStale($1) }
        ingest.expectPendingIsTheLedgersWork("offset conflict")

        // Partitions assigned with nothing unflushed: pending stays as it is.
        ingest.changeOwnership(of: [p[1], p[2]]) { $0.assign($1, storedOffset: first.parts[1].newOffset) }
        ingest.expectPendingIsTheLedgersWork("assigned")
        ingest.poll(300)
        ingest.expectPendingIsTheLedgersWork("reassigned")

        #expect(!ingest.layers.covers([p[1]]) && !ingest.layers.covers([p[2]]) && ingest.layers.covers([p[0]]))

        // Complete again from a snapshot (here, what the flushes wrote); a flush that commits after a revocation
        // during its flight is durable for all its partitions: it grows the durable layer, and the revoked
        // partition is no longer covered.
        ingest.layers.install(ingest.layers.durable, owned: Set(p), everyPartition: true)
        let (fifth, fifthFlight) = try ingest.startFlush()
        ingest.changeOwnership(of: [p[0]]) { $0.revoke($1) }
        ingest.commit(fifthFlight)
        durable.merge(fifth.mergedDelta)
        #expect(Cells([ingest.layers.durable]) == Cells(durable))
        #expect(!ingest.layers.complete && !ingest.layers.covers([p[0]]) && ingest.layers.covers([p[1], p[2]]))

        // A snapshot installed while owning part of the partitions covers those only; the next commit grows it.
        ingest.changeOwnership(of: [p[0]]) { $0.assign($1, storedOffset: fifth.parts.first { $0.topicPartition == p[0] }?.newOffset) }
        ingest.poll(300)
        ingest.layers.install(ingest.layers.durable, owned: [p[0], p[1]], everyPartition: false)
        #expect(!ingest.layers.complete && ingest.layers.covers([p[0], p[1]]) && !ingest.layers.covers([p[2]]))
        #expect(!ingest.layers.covers([]), "an artist of no known partition is covered only when memory is complete")
        let (sixth, sixthFlight) = try ingest.startFlush()
        ingest.commit(sixthFlight)
        durable.merge(sixth.mergedDelta)
        #expect(Cells([ingest.layers.durable]) == Cells(durable))
        #expect(ingest.layers.isIdle)
    }

    @Test func aRebuildOrAStaleEpochLeavesTheDurableLayerAlone() {
        var layers = MemoryLayers()
        var grown = CubeMemory()
        grown.addListeners(artistID: "a1", trackID: nil, day: 20_000, HyperLogLog())
        layers.install(CubeMemory(), owned: [Self.partitions[0]], everyPartition: false)
        let epoch = layers.epoch
        layers.storedAggregatesReplaced()
        #expect(!layers.covers([Self.partitions[0]]) && !layers.covers([]) && layers.epoch == epoch + 1)
        let replacedUnderTheOldEpoch = layers.replaceDurable(with: grown, ifStillAt: epoch)
        #expect(!replacedUnderTheOldEpoch)
        #expect(layers.durable.dayRange == nil)
        let replaced = layers.replaceDurable(with: grown, ifStillAt: layers.epoch)
        #expect(replaced)
        #expect(layers.durable.dayRange == 20_000...20_000)
    }

    /// An artist's stamp moves with every change to what the layers (or PostgreSQL before the horizon) answer for
    /// it, and only then: its events consumed, a flush holding them starting, failing or committing, and the changes
    /// that may touch any artist. Another artist's events and flushes leave it.
    @Test func anArtistsStampMovesWithItsNumbersOnly() {
        let artist = "artist-a"
        // Another artist on another of the shared counters.
        let other = (1...50).map { "artist-\($0)" }.first { ArtistDays([$0], days: 0...0) != ArtistDays([artist], days: 0...0) }!
        // 28 days ending with the events' day.
        let days = Self.now.daysSinceEpoch - 27..<Self.now.daysSinceEpoch + 1
        func delta(_ artistID: String) -> InternedDelta {
            InternedDelta(events: [.stream(StreamEvent(
                eventID: "e-\(artistID)", occurredAt: Self.now, artistID: artistID, trackID: "t1", platform: "spotify"))])
        }
        var layers = MemoryLayers()
        layers.install(CubeMemory(), owned: Set(Self.partitions), everyPartition: true)
        var stamps = (layers.stamp(of: artist, days: days), layers.stamp(of: other, days: days))
        /// Which of the two stamps moved since the last call.
        func moved() -> (artist: Bool, other: Bool) {
            let now = (layers.stamp(of: artist, days: days), layers.stamp(of: other, days: days))
            defer { stamps = now }
            return (now.0 != stamps.0, now.1 != stamps.1)
        }

        layers.consumed([Self.partitions[0]: delta(other)])
        #expect(moved() == (false, true), "another artist's events")
        layers.consumed([Self.partitions[1]: delta(artist)])
        #expect(moved() == (true, false), "the artist's events")
        var flight = layers.flushStarted()
        #expect(moved() == (true, true), "a flush of both started")
        layers.flushFailed(rebuildingFrom: nil)
        #expect(moved() == (true, true), "a flush failed whole: its numbers pending again")
        flight = layers.flushStarted()
        layers.consumed([Self.partitions[0]: delta(other)])
        _ = moved()
        layers.flushCommitted(epoch: flight.epoch, durable: layers.commit(of: flight.epoch)?.grown())
        #expect(moved() == (true, true), "a commit of both artists' events")
        flight = layers.flushStarted()
        #expect(moved() == (false, true), "a flush of the other artist's events only started")
        layers.flushCommitted(epoch: flight.epoch, durable: layers.commit(of: flight.epoch)?.grown())
        #expect(moved() == (false, true), "a commit of the other artist's events only")

        layers.ownershipChanged(of: [Self.partitions[2]], rebuildingFrom: nil)
        #expect(moved() == (true, true), "a change of ownership")
        layers.install(layers.durable, owned: Set(Self.partitions), everyPartition: true)
        #expect(moved() == (true, true), "a snapshot installed")
        layers.storedAggregatesReplaced()
        #expect(moved() == (true, true), "stored aggregates replaced")
        layers.storedNumbersDropped()
        #expect(moved() == (true, true), "stored numbers dropped")
        layers.consumed([Self.partitions[0]: delta(other)])
        layers.flushFailed(rebuildingFrom: [delta(other)])
        #expect(moved() == (true, true), "a failed flush that rebuilds pending")
    }

    /// Every cube's rows and every listener sketch of some layers, added together.
    struct Cells: Equatable, CustomStringConvertible {
        var rows: [String: CubeRowSums] = [:]
        var artistListeners: [ArtistDay: HyperLogLog]
        var trackListeners: [TrackDay: HyperLogLog]

        init(_ layers: [CubeMemory]) {
            var sum = CubeMemory()
            for layer in layers { sum.add(layer) }
            for cube in CubeMemory.cubes {
                for (key, sums) in CubeRowsTests.rows(of: cube, in: sum) { rows["\(cube.table) \(key)"] = sums }
            }
            (artistListeners, trackListeners) = sum.listeners
        }

        var description: String {
            "\(rows.count) rows, \(artistListeners.count) artist days, \(trackListeners.count) track days"
        }

        init(_ delta: InternedDelta) {
            var layer = CubeMemory()
            layer.add(delta)
            self.init([layer])
        }
    }
}
