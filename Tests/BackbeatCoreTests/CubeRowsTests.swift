import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory layers' rows and sketches against the same sums computed naively, per event.
@Suite struct CubeRowsTests {
    /// A layer's cells, open or sealed, are its events summed to each cube's grain and dimensions (computed naively,
    /// per event, money in micros); its sketches are its deltas' unioned.
    @Test func aLayersRowsAreItsEventsSummedToEachCubesGrainAndDimensions() {
        let (parts, events) = Self.parts()
        var open = CubeMemory()
        for part in parts { open.add(part) }
        var sealed = open
        sealed.seal(daysBefore: .max)
        for layer in [open, sealed] {
            // The funnel is counted when sessions meet their stored states, not per event (FunnelTests).
            for cube in CubeMemory.cubes where cube.dataset != .funnel {
                var expected: [String: [Int128]] = [:]
                for event in events where Self.dataset(of: event) == cube.dataset {
                    let (key, values) = Self.naiveRow(event, cube)
                    expected[key] = zip(expected[key] ?? Array(repeating: 0, count: values.count), values).map { $0 + $1 }
                }
                let read = Self.rows(of: cube, in: layer).mapValues { sums -> [Int128] in
                    switch cube.dataset {
                    case .streams, .funnel: [Int128(sums.integers.0), Int128(sums.integers.1), Int128(sums.integers.2)]
                    case .revenue: [sums.amount.micros, Int128(sums.integers.0)]
                    case .social, .page: [Int128(sums.integers.0)]
                    }
                }
                #expect(read == expected && !read.isEmpty, "\(cube.table): \(read.count) rows read, \(expected.count) expected")
            }
            let read = layer.listeners
            var merged = RollupDelta()
            for part in parts { merged.merge(part) }
            let sameListeners = read.artists == merged.artistListeners && read.tracks == merged.trackListeners
            #expect(sameListeners && !read.artists.isEmpty && !read.tracks.isEmpty)
            let visitors = layer.visitors
            #expect(visitors.artists == merged.artistVisitors && visitors.tracks == merged.pageVisitors && !visitors.tracks.isEmpty)
        }
    }

    /// The poll loop adds what each poll consumed (an interned delta of its own) to the pending layer: the layer is
    /// the one the events' delta would make, in every cube and sketch, and the days before the horizon are left out
    /// the same way.
    @Test func pollsAddedAsInternedDeltasMakeTheLayerTheirDeltaMakes() {
        var generator = EventGenerator(.init(seed: 12, artists: 4, days: 3, start: CivilDate(year: 2026, month: 10, day: 1), pageFraction: 0.2))
        let events = (0..<6_000).compactMap { _ in generator.next().event }
        var delta = RollupDelta()
        for event in events { delta.add(event) }
        let secondDay = CivilDate(year: 2026, month: 10, day: 2).daysSinceEpoch
        for horizon in [Int64.min, secondDay] {
            var oneByOne = CubeMemory(horizonDay: horizon)
            for poll in stride(from: 0, to: events.count, by: 700) {
                oneByOne.add(InternedDelta(events: events[poll..<min(poll + 700, events.count)]))
            }
            var fromDelta = CubeMemory(horizonDay: horizon)
            fromDelta.add(delta)
            // The funnel is counted when sessions meet their stored states, not per event (FunnelTests).
            for cube in CubeMemory.cubes where cube.dataset != .funnel {
                let read = Self.rows(of: cube, in: oneByOne)
                let expected = Self.rows(of: cube, in: fromDelta)
                #expect(read == expected && !read.isEmpty, "\(cube.table) from \(horizon): \(read.count) rows, \(expected.count) expected")
            }
            let listeners = oneByOne.listeners, expected = fromDelta.listeners
            #expect(listeners.artists == expected.artists && listeners.tracks == expected.tracks && !listeners.tracks.isEmpty)
            // The visitors of the page events, per artist-day and page-day, as the oracle counts them.
            let visitors = oneByOne.visitors
            let expectedArtists = delta.artistVisitors.filter { $0.key.day >= horizon }, expectedPages = delta.pageVisitors.filter { $0.key.day >= horizon }
            #expect(visitors.artists == expectedArtists && visitors.tracks == expectedPages && !expectedPages.isEmpty)
            #expect(oneByOne.dayRange == fromDelta.dayRange)
        }
    }

    /// The artist-day rows a flush stores (`ArtistDayRows`) are its events summed to each cube's grain and
    /// dimensions (computed naively, per event), each artist-day's rows under that artist and day alone, every key
    /// once: from one delta, and from a flush's partition deltas combined (`CombinedDeltas`: each with a dictionary
    /// of its own, keys repeated across them), whose listener sketches are also the one delta's.
    @Test func aDeltasArtistDayRowsAreItsEventsSummedToEachCube() {
        let (_, events) = Self.parts()
        let delta = InternedDelta(events: events)
        let partitions = (0..<5).map { part in InternedDelta(events: events.indices.filter { $0 % 5 == part }.map { events[$0] }) }
        #expect(partitions.reduce(0) { $0 + $1.rowCount } > delta.rowCount, "no key is repeated across the partitions")
        let combined = CombinedDeltas(partitions)
        for (grouped, values) in [(ArtistDayRows(delta), delta.values), (combined.artistDayRows(), combined.values)] {
            for cube in Cube.all where cube.dataset != .funnel {
                var expected: [String: [Int128]] = [:]
                for event in events where Self.dataset(of: event) == cube.dataset {
                    let (key, values) = Self.naiveRow(event, cube)
                    expected[key] = zip(expected[key] ?? Array(repeating: 0, count: values.count), values).map { $0 + $1 }
                }
                var read: [String: [Int128]] = [:]
                var artistDays = Set<String>()
                var repeated = 0
                for day in grouped.days(of: cube) {
                    artistDays.insert("\(day.artist)|\(day.day)")
                    let width = cube.dimensions.count
                    for row in 0..<day.rowCount {
                        let bucket = cube.grain == .day ? day.day : day.day * cube.grain.slotsPerDay + Int64(day.slots[row])
                        let dimensions = day.values[row * width ..< (row + 1) * width].map { value in
                            if case .id(let id) = value { values[id] } else { value.fixedText ?? "" }
                        }
                        let key = ([values[day.artist], String(bucket)] + dimensions).joined(separator: "|")
                        let sums = day.sums[row]
                        if read[key] != nil { repeated += 1 }
                        read[key] = switch cube.dataset {
                        case .streams, .funnel: [Int128(sums.integers.0), Int128(sums.integers.1), Int128(sums.integers.2)]
                        case .revenue: [sums.amount.micros, Int128(sums.integers.0)]
                        case .social, .page: [Int128(sums.integers.0)]
                        }
                    }
                }
                #expect(read == expected && !read.isEmpty && repeated == 0, "\(cube.table): \(read.count) rows read, \(expected.count) expected, \(repeated) repeated")
                #expect(artistDays.count == grouped.days(of: cube).count, "\(cube.table): an artist-day in two CubeDays")
            }
        }
        let named = { (listeners: InternedDelta.Listeners, values: ValueDictionary) in
            (artists: Dictionary(uniqueKeysWithValues: listeners.artists.map { ("\(values[$0.key.artist])|\($0.key.day)", $0.value) }),
             tracks: Dictionary(uniqueKeysWithValues: listeners.tracks.map { ("\(values[$0.key.artist])|\(values[$0.key.track])|\($0.key.day)", $0.value) }))
        }
        let one = named(delta.listeners, delta.values), fromPartitions = named(combined.listeners(), combined.values)
        #expect(one.artists == fromPartitions.artists && one.tracks == fromPartitions.tracks && !one.tracks.isEmpty)
    }

    /// A layer's rows of `cube`, keyed by artist, bucket and dimension values.
    static func rows(of cube: Cube, in layer: CubeMemory) -> [String: CubeRowSums] {
        var rows: [String: CubeRowSums] = [:]
        layer.forEachRow(of: cube) { artistID, bucket, values, sums in
            rows[([artistID, String(bucket)] + values).joined(separator: "|"), default: CubeRowSums()] += sums
        }
        return rows
    }

    /// Five deltas of generated events, as a flush of five partitions holds them, and the valid events.
    static func parts() -> ([RollupDelta], [Event]) {
        var generator = EventGenerator(.init(seed: 11, artists: 4, days: 3, start: CivilDate(year: 2026, month: 10, day: 1), pageFraction: 0.2))
        var parts = Array(repeating: RollupDelta(), count: 5)
        var events: [Event] = []
        for index in 0..<6_000 {
            guard let event = generator.next().event else { continue }
            parts[index % parts.count].add(event)
            events.append(event)
        }
        return (parts, events)
    }

    static func dataset(of event: Event) -> Dataset {
        switch event {
        case .stream: .streams
        case .revenue: .revenue
        case .social: .social
        case .page: .page
        }
    }

    static func naiveRow(_ event: Event, _ cube: Cube) -> (String, [Int128]) {
        let bucket = event.occurredAt.seconds.floorDiv(cube.grain.seconds)
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
        case .page(let page):
            let key = PageKey(page)
            return (([page.artistID, String(bucket)] + cube.dimensions.map(key.value(of:))).joined(separator: "|"), [1])
        }
    }
}
