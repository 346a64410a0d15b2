import BackbeatCore
import Testing

/// A delta projected into each cube (what a flush writes) against the same sums computed naively, per event.
@Suite struct CubeRowsTests {
    @Test func everyCubesRowsAreTheEventsSummedToItsGrainAndDimensions() {
        var generator = EventGenerator(.init(seed: 5, artists: 6, days: 4, start: CivilDate(year: 2026, month: 10, day: 1)))
        var delta = RollupDelta()
        var events: [Event] = []
        for _ in 0..<5_000 {
            guard let event = generator.next().event else { continue }
            delta.add(event)
            events.append(event)
        }
        for cube in Cube.all {
            // Naively: one string key per event, its metrics added as text-free integers (money in micros).
            var expected: [String: [Int128]] = [:]
            for event in events where Self.dataset(of: event) == cube.dataset {
                let (key, values) = Self.naiveRow(event, cube)
                expected[key] = zip(expected[key] ?? Array(repeating: 0, count: values.count), values).map { $0 + $1 }
            }
            let rows = delta.rows(for: cube)
            #expect(rows.count == expected.count, "\(cube.table)")
            for (key, sums) in rows {
                let name = ([key.artistID, String(key.bucket)] + cube.dimensions.indices.map(key.dimension)).joined(separator: "|")
                let values: [Int128] = switch cube.dataset {
                case .streams: [Int128(sums.integers.0), Int128(sums.integers.1), Int128(sums.integers.2)]
                case .revenue: [sums.amount.micros, Int128(sums.integers.0)]
                case .social: [Int128(sums.integers.0)]
                }
                #expect(expected[name] == values, "\(cube.table) \(name)")
            }
        }
    }

    /// A flush's partitions are summed together: the rows and sketches of several deltas are those of their merge.
    @Test func rowsOfSeveralDeltasAreTheRowsOfTheirMerge() {
        let parts = Self.parts()
        var merged = RollupDelta()
        for part in parts { merged.merge(part) }
        for cube in Cube.all {
            let same = RollupDelta.rows(for: cube, of: parts) == merged.rows(for: cube)
            #expect(same, "\(cube.table)")
        }
        let listeners = RollupDelta.listeners(of: parts)
        let sameArtists = listeners.artists == merged.artistListeners
        let sameTracks = listeners.tracks == merged.trackListeners
        let sameOne = RollupDelta.listeners(of: [merged]).tracks == merged.trackListeners
        #expect(sameArtists && sameTracks && sameOne)
    }

    /// A flush's in-flight layer gives the rows and sketches that projecting its deltas would, open or sealed.
    @Test func aLayersRowsAreTheRowsItsDeltasProject() {
        let parts = Self.parts()
        var open = CubeMemory()
        for part in parts { open.add(part) }
        var sealed = open
        sealed.seal(daysBefore: .max)
        for layer in [open, sealed] {
            for cube in CubeMemory.cubes {
                let read = Self.rows(of: cube, in: layer)
                var projected: [String: CubeRowSums] = [:]
                for (key, sums) in RollupDelta.rows(for: cube, of: parts) {
                    projected[([key.artistID, String(key.bucket)] + cube.dimensions.indices.map(key.dimension)).joined(separator: "|")] = sums
                }
                let same = read == projected
                #expect(same && !read.isEmpty, "\(cube.table): \(read.count) rows read, \(projected.count) projected")
            }
            let read = layer.listeners
            let projected = RollupDelta.listeners(of: parts)
            let sameListeners = read.artists == projected.artists && read.tracks == projected.tracks
            #expect(sameListeners && !read.artists.isEmpty && !read.tracks.isEmpty)
        }
    }

    /// The poll loop adds each event to the pending layer as it comes: the layer is the one its delta would make,
    /// in every cube and sketch, and the days before the horizon are left out the same way.
    @Test func eventsAddedOneByOneMakeTheLayerTheirDeltaMakes() {
        var generator = EventGenerator(.init(seed: 12, artists: 4, days: 3, start: CivilDate(year: 2026, month: 10, day: 1)))
        let events = (0..<6_000).compactMap { _ in generator.next().event }
        var delta = RollupDelta()
        for event in events { delta.add(event) }
        let secondDay = CivilDate(year: 2026, month: 10, day: 2).daysSinceEpoch
        for horizon in [Int64.min, secondDay] {
            var oneByOne = CubeMemory(horizonDay: horizon)
            for event in events { oneByOne.add(event) }
            var fromDelta = CubeMemory(horizonDay: horizon)
            fromDelta.add(delta)
            for cube in CubeMemory.cubes {
                let read = Self.rows(of: cube, in: oneByOne)
                let expected = Self.rows(of: cube, in: fromDelta)
                #expect(read == expected && !read.isEmpty, "\(cube.table) from \(horizon): \(read.count) rows, \(expected.count) expected")
            }
            let listeners = oneByOne.listeners, expected = fromDelta.listeners
            #expect(listeners.artists == expected.artists && listeners.tracks == expected.tracks && !listeners.tracks.isEmpty)
            #expect(oneByOne.dayRange == fromDelta.dayRange)
        }
    }

    /// A layer's rows of `cube`, keyed by artist, bucket and dimension values.
    static func rows(of cube: Cube, in layer: CubeMemory) -> [String: CubeRowSums] {
        var rows: [String: CubeRowSums] = [:]
        layer.forEachRow(of: cube) { artistID, bucket, values, sums in
            let dimensions = [values.0, values.1].prefix(cube.dimensions.count)
            rows[([artistID, String(bucket)] + dimensions).joined(separator: "|"), default: CubeRowSums()] += sums
        }
        return rows
    }

    /// Five deltas of generated events, as a flush of five partitions holds them.
    static func parts() -> [RollupDelta] {
        var generator = EventGenerator(.init(seed: 11, artists: 4, days: 3, start: CivilDate(year: 2026, month: 10, day: 1)))
        var parts = Array(repeating: RollupDelta(), count: 5)
        for index in 0..<6_000 {
            guard let event = generator.next().event else { continue }
            parts[index % parts.count].add(event)
        }
        return parts
    }

    static func dataset(of event: Event) -> Dataset {
        switch event {
        case .stream: .streams
        case .revenue: .revenue
        case .social: .social
        }
    }

    static func naiveRow(_ event: Event, _ cube: Cube) -> (String, [Int128]) {
        let hour = event.occurredAt.seconds.floorDiv(3600)
        let bucket = cube.grain == .hour ? hour : hour.floorDiv(24)
        switch event {
        case .stream(let play):
            let key = StreamKey(play)
            let counters = StreamCounters(play)
            return (([play.artistID, String(bucket)] + cube.dimensions.map(key.value(of:))).joined(separator: "|"),
                    [Int128(counters.streams), Int128(counters.skips), Int128(counters.listeningMs)])
        case .revenue(let revenue):
            let key = RevenueKey(revenue)
            return (([revenue.artistID, String(bucket)] + cube.dimensions.map(key.value(of:))).joined(separator: "|"), [revenue.amount.micros, 1])
        case .social(let social):
            let key = SocialKey(social)
            return (([social.artistID, String(bucket)] + cube.dimensions.map(key.value(of:))).joined(separator: "|"), [Int128(social.count)])
        }
    }
}
