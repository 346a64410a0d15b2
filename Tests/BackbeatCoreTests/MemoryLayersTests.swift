import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory layers driven beside the ledger through every transition of a live ingest: after each one, the
/// pending cubes are exactly those of the ledger's unflushed work, a flush's cubes exactly those of its batch, and
/// the durable layer exactly what the committed flushes wrote while memory was complete.
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

        mutating func assign(_ partitions: [TopicPartition], storedOffset: Int64?) {
            for partition in partitions { ledger.assign(partition, storedOffset: storedOffset) }
            layers.ownershipChanged(partitions)
        }

        /// Takes a batch and starts its flush.
        mutating func startFlush() throws -> (FlushBatch, MemoryLayers.Flight) {
            let taken = ledger.takeBatch()
            let batch = try #require(taken)
            let flight = layers.flushStarted()
            let same = Cells(flight.layers) == Cells(batch.mergedDelta)
            #expect(same, "a flush's cubes are its batch's")
            return (batch, flight)
        }

        mutating func commit(_ flight: MemoryLayers.Flight) {
            layers.flushCommitted(epoch: flight.epoch, durable: layers.commit(of: flight.epoch)?.grown())
            #expect(layers.inFlight.isEmpty)
        }

        /// The pending cubes are the cubes of the ledger's unflushed work.
        func expectPendingIsTheLedgersWork(_ comment: Comment) {
            var probe = ledger
            let unflushed = probe.takeBatch()?.mergedDelta ?? InternedDelta()
            let same = Cells(Array(layers.pending.values)) == Cells(unflushed)
            #expect(same, comment)
            #expect(!unflushed.streams.isEmpty, comment)
        }
    }

    @Test func everyTransitionKeepsTheLayersTheLedgersWork() throws {
        let p = Self.partitions
        var ingest = Ingest()
        ingest.assign(p, storedOffset: nil)
        ingest.poll(300)
        ingest.expectPendingIsTheLedgersWork("consumed")
        #expect(!ingest.layers.complete)

        // A snapshot installed while nothing is in flight: complete, pending kept as it was.
        ingest.layers.install(CubeMemory())
        #expect(ingest.layers.complete)
        ingest.expectPendingIsTheLedgersWork("installed")

        // A flush that commits: its cubes join the durable layer; what was consumed meanwhile stays pending.
        let (first, firstFlight) = try ingest.startFlush()
        #expect(ingest.layers.pending.isEmpty && ingest.layers.inFlight.count == 3)
        ingest.poll(200)
        ingest.expectPendingIsTheLedgersWork("consumed while a flush is in flight")
        ingest.commit(firstFlight)
        var durable = first.mergedDelta
        #expect(Cells([ingest.layers.durable]) == Cells(durable))

        // A flush that fails while partition 2 is revoked: partitions 0 and 1 get their in-flight cubes back, ahead
        // of what they consumed since; partition 2's go with its batch.
        let (second, _) = try ingest.startFlush()
        ingest.poll(200)
        ingest.ledger.revoke(p[2])
        ingest.layers.ownershipChanged([p[2]])
        #expect(!ingest.layers.complete && ingest.layers.pending[p[2]] == nil)
        let restored = ingest.ledger.restore(second)
        #expect(restored == [p[0], p[1]])
        ingest.layers.flushFailed(restored: restored)
        #expect(ingest.layers.inFlight.isEmpty)
        ingest.expectPendingIsTheLedgersWork("failed flush, one partition revoked")

        // An offset conflict on partition 1: its batch goes back and the partition is dropped as stale.
        let (third, _) = try ingest.startFlush()
        ingest.poll(150)
        let back = ingest.ledger.restore(third)
        ingest.ledger.markStale(p[1])
        ingest.layers.flushFailed(restored: back)
        ingest.layers.ownershipChanged([p[1]])
        ingest.expectPendingIsTheLedgersWork("offset conflict")

        // Owning every partition again, complete from a snapshot (here, what the first flush wrote).
        ingest.assign([p[1], p[2]], storedOffset: first.parts[1].newOffset)
        ingest.poll(300)
        ingest.expectPendingIsTheLedgersWork("reassigned")
        ingest.layers.install(ingest.layers.durable)

        // A flush that commits after a revocation during its flight leaves the durable layer as it was.
        let (_, fourthFlight) = try ingest.startFlush()
        ingest.ledger.revoke(p[0])
        ingest.layers.ownershipChanged([p[0]])
        #expect(ingest.layers.commit(of: fourthFlight.epoch) == nil)
        ingest.commit(fourthFlight)
        #expect(Cells([ingest.layers.durable]) == Cells(durable))

        // Complete again; the next commit grows the durable layer.
        ingest.assign([p[0]], storedOffset: first.parts[0].newOffset)
        ingest.poll(300)
        ingest.layers.install(ingest.layers.durable)
        let (fifth, fifthFlight) = try ingest.startFlush()
        ingest.commit(fifthFlight)
        durable.merge(fifth.mergedDelta)
        #expect(Cells([ingest.layers.durable]) == Cells(durable))
        #expect(ingest.layers.pending.isEmpty && ingest.layers.isIdle)
    }

    @Test func aRebuildOrAStaleEpochLeavesTheDurableLayerAlone() {
        var layers = MemoryLayers()
        var grown = CubeMemory()
        grown.addListeners(artistID: "a1", trackID: nil, day: 20_000, HyperLogLog())
        layers.install(CubeMemory())
        let epoch = layers.epoch
        layers.storedAggregatesReplaced()
        #expect(!layers.complete && layers.epoch == epoch + 1)
        let replacedUnderTheOldEpoch = layers.replaceDurable(with: grown, ifStillAt: epoch)
        #expect(!replacedUnderTheOldEpoch)
        #expect(layers.durable.dayRange == nil)
        let replaced = layers.replaceDurable(with: grown, ifStillAt: layers.epoch)
        #expect(replaced)
        #expect(layers.durable.dayRange == 20_000...20_000)
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
            (artistListeners, trackListeners) = CubeMemory.listeners(of: [sum])
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
