import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory layers' own rules: epochs, and the stamps answers are kept by. Their transitions driven by the
/// ingest's state are tested with it (`IngestStateTests`).
@Suite struct MemoryLayersTests {
    static let now = RFC3339.parseTimestamp("2026-06-15T12:00:00Z")!
    static let partitions = (0..<3).map { TopicPartition(topic: "events", partition: $0) }

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
        let other = (1...50).map { "artist-\($0)" }.first { ArtistDays([$0], .streams, days: 0...0) != ArtistDays([artist], .streams, days: 0...0) }!
        // 28 days ending with the events' day.
        let days = Self.now.daysSinceEpoch - 27..<Self.now.daysSinceEpoch + 1
        func delta(_ artistID: String) -> InternedDelta {
            InternedDelta(events: [.stream(StreamEvent(
                eventID: "e-\(artistID)", occurredAt: Self.now, artistID: artistID, trackID: "t1", platform: "spotify"))])
        }
        var layers = MemoryLayers()
        layers.install(CubeMemory(), owned: Set(Self.partitions), everyPartition: true)
        var stamps = (layers.stamp(of: artist, reading: .all, days: days), layers.stamp(of: other, reading: .all, days: days))
        /// Which of the two stamps moved since the last call.
        func moved() -> (artist: Bool, other: Bool) {
            let now = (layers.stamp(of: artist, reading: .all, days: days), layers.stamp(of: other, reading: .all, days: days))
            defer { stamps = now }
            return (now.0 != stamps.0, now.1 != stamps.1)
        }

        layers.consumed([Self.partitions[0]: delta(other)])
        #expect(moved() == (false, true), "another artist's events")
        layers.consumed([Self.partitions[1]: delta(artist)])
        #expect(moved() == (true, false), "the artist's events")
        var flight = layers.flushStarted()
        #expect(moved() == (true, true), "a flush of both started")
        layers.flushFailed(rebuilt: nil)
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

        layers.ownershipChanged(of: [Self.partitions[2]], rebuilt: nil)
        #expect(moved() == (true, true), "a change of ownership")
        layers.install(layers.durable, owned: Set(Self.partitions), everyPartition: true)
        #expect(moved() == (true, true), "a snapshot installed")
        layers.storedAggregatesReplaced()
        #expect(moved() == (true, true), "stored aggregates replaced")
        layers.storedNumbersDropped()
        #expect(moved() == (true, true), "stored numbers dropped")
        layers.consumed([Self.partitions[0]: delta(other)])
        layers.flushFailed(rebuilt: MemoryLayers.Rebuilt(from: [delta(other)]))
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
