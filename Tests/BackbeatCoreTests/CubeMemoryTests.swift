import BackbeatCore
import BackbeatTestSupport
import Testing

/// The in-memory cubes answer every query exactly as a brute-force scan of the full hourly rows does, whether the
/// days are open, sealed, or sealed with late events on top, and after eviction for the days still held.
@Suite struct CubeMemoryTests {
    static let start = CivilDate(year: 2026, month: 10, day: 1)
    static let firstDay = start.daysSinceEpoch
    static let dayCount = 12

    /// Two deltas from the generator: the second one lands on the same days (late events once sealed).
    /// `all` is both merged, the truth the answers are checked against.
    static func deltas() -> (first: RollupDelta, second: RollupDelta, all: RollupDelta) {
        var generator = EventGenerator(.init(seed: 7, artists: 12, days: dayCount, start: start, tracksPerArtist: 6, pageFraction: 0.2))
        var first = RollupDelta()
        var second = RollupDelta()
        for index in 0..<30_000 {
            guard let event = generator.next().event else { continue }
            if index % 3 == 0 { second.add(event) } else { first.add(event) }
        }
        var all = first
        all.merge(second)
        return (first, second, all)
    }

    static var queries: [Query] {
        let artist = EventGenerator.artistID(0)
        let other = EventGenerator.artistID(3)
        let days = { (from: Int64, to: Int64) in
            QueryInterval(from: Timestamp(seconds: (firstDay + from) * 86_400), to: Timestamp(seconds: (firstDay + to) * 86_400))
        }
        let hours = QueryInterval(from: Timestamp(seconds: (firstDay + 2) * 86_400 + 5 * 3600), to: Timestamp(seconds: (firstDay + 4) * 86_400 + 7 * 3600))
        var result: [Query] = []
        for granularity in [Granularity.day, .week, .month, .all] {
            result.append(Query(dataset: .streams, interval: days(0, 12), granularity: granularity, filters: [.artistID: [artist]]))
            result.append(Query(dataset: .streams, interval: days(1, 9), granularity: granularity, groupBy: [.platform], filters: [.artistID: [artist]]))
            result.append(Query(dataset: .streams, interval: days(0, 12), granularity: granularity, groupBy: [.country], filters: [.artistID: [other]]))
            result.append(Query(dataset: .streams, interval: days(2, 12), granularity: granularity, groupBy: [.trackID], filters: [.artistID: [artist]]))
            result.append(Query(dataset: .streams, interval: days(0, 7), granularity: granularity, groupBy: [.ageRange, .gender], filters: [.artistID: [artist, other]]))
            result.append(Query(dataset: .streams, interval: days(0, 12), granularity: granularity, groupBy: [.artistID, .platform], filters: [.platform: ["spotify", "tidal"]]))
            result.append(Query(dataset: .revenue, interval: days(0, 12), granularity: granularity, groupBy: [.source, .currency], filters: [.artistID: [artist]]))
            result.append(Query(dataset: .revenue, interval: days(3, 12), granularity: granularity, groupBy: [.currency]))
            result.append(Query(dataset: .social, interval: days(0, 12), granularity: granularity, groupBy: [.platform, .action], filters: [.artistID: [other]]))
            result.append(Query(dataset: .social, interval: days(0, 12), granularity: granularity, groupBy: [.action], filters: [.artistID: [artist], .action: ["follow", "unfollow"]]))
        }
        result.append(Query(dataset: .streams, interval: hours, granularity: .hour, filters: [.artistID: [artist]]))
        result.append(Query(dataset: .streams, interval: hours, granularity: .day, filters: [.artistID: [other]]))
        result.append(Query(dataset: .streams, interval: days(0, 12), granularity: .day, filters: [.artistID: ["artist-9999"]]))
        return result
    }

    @Test func answersEqualABruteForceScanWhetherOpenSealedOrSealedWithLateEvents() throws {
        let (first, second, all) = Self.deltas()

        var memory = CubeMemory()
        memory.add(first)
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, first), query) }
        #expect(memory.seal(daysBefore: Self.firstDay + 100) == Self.dayCount)
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, first), query) }
        memory.add(second)  // late events on sealed days: open cells on top of sealed ones
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, all), query) }
        memory.seal(daysBefore: Self.firstDay + 100)  // re-sealed, merged
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, all), query) }
        #expect(memory.sealedFootprint.nonZeroCells > 0)
    }

    /// While events arrive, a sealed day is re-encoded only once its open part has grown to the given share; the
    /// answers are the same whichever days are sealed.
    @Test func aSealedDayIsSealedAgainOnlyOnceItsOpenPartHasGrown() throws {
        var generator = EventGenerator(.init(seed: 9, artists: 12, days: Self.dayCount, start: Self.start, tracksPerArtist: 6, pageFraction: 0.2))
        let events = (0..<30_000).compactMap { _ in generator.next().event }
        var memory = CubeMemory()
        var all = RollupDelta()
        func add(_ slice: ArraySlice<Event>) {
            memory.add(InternedDelta(events: slice))
            for event in slice { all.add(event) }
        }
        add(events[0..<20_000])
        #expect(memory.seal(daysBefore: Self.firstDay + 100, minimumOpenFraction: 0.25) == Self.dayCount, "never sealed: all sealed")
        add(events[20_000..<20_100])  // a few late events on every day
        #expect(memory.seal(daysBefore: Self.firstDay + 100, minimumOpenFraction: 0.25) == 0)
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, all), query) }
        add(events[20_100...])  // half as many again: every day's open part is past a quarter
        #expect(memory.seal(daysBefore: Self.firstDay + 100, minimumOpenFraction: 0.25) == Self.dayCount)
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, all), query) }
        add(events[0..<100])
        #expect(memory.seal(daysBefore: Self.firstDay + 100) > 0, "without a share, every day with open cells")
    }

    /// A layer built on its own (its symbols in another order) added to sealed and open days answers as adding its
    /// delta does; days before the horizon are skipped.
    @Test func addingALayerEqualsAddingItsDelta() throws {
        let (first, second, all) = Self.deltas()
        var layer = CubeMemory()
        layer.add(second)

        var memory = CubeMemory()
        memory.add(first)
        memory.seal(daysBefore: Self.firstDay + 6)
        memory.add(layer)
        var reference = CubeMemory()
        reference.add(first)
        reference.add(second)
        for query in Self.queries { try expectSame(memory.rows(for: query), bruteForce(query, all), query) }

        let artist = EventGenerator.artistID(1)
        let days = Self.firstDay..<Self.firstDay + Int64(Self.dayCount)
        let scope = ListenerScope(artistID: artist, days: days)
        #expect(memory.listenerSketches(scope, granularity: .day) == reference.listenerSketches(scope, granularity: .day))
        let tracks = Set(all.trackListeners.keys.filter { $0.artistID == artist }.map(\.trackID))
        #expect(!tracks.isEmpty)
        #expect(memory.keyedSketches(.listeners, artistID: artist, keys: Array(tracks), days: days)
                == reference.keyedSketches(.listeners, artistID: artist, keys: Array(tracks), days: days))

        var late = CubeMemory(horizonDay: Self.firstDay + 100)
        late.add(layer)
        #expect(late.dayRange == nil, "nothing before the horizon is held")
    }

    @Test func listenerSketchesAreTheUnionOfTheDays() {
        let (first, second, all) = Self.deltas()
        var memory = CubeMemory()
        memory.add(first)
        memory.seal(daysBefore: Self.firstDay + 6)
        memory.add(second)
        let artist = EventGenerator.artistID(1)
        let days = Self.firstDay + 1..<Self.firstDay + 9
        var expected = HyperLogLog()
        for (key, sketch) in all.artistListeners where key.artistID == artist && days.contains(key.day) { expected.formUnion(sketch) }
        let sketches = memory.listenerSketches(ListenerScope(artistID: artist, days: days), granularity: .all)
        #expect(sketches[nil] == expected)
        #expect(expected.cardinality > 0)

        let track = all.trackListeners.keys.first { $0.artistID == artist }!.trackID
        var expectedTrack = HyperLogLog()
        for (key, sketch) in all.trackListeners where key.artistID == artist && key.trackID == track && days.contains(key.day) { expectedTrack.formUnion(sketch) }
        #expect(memory.keyedSketches(.listeners, artistID: artist, keys: [track], days: days)[track] == expectedTrack)
    }

    @Test func sealedSketchesInEveryModeEqualTheOpenOnes() {
        // Two days of 40 artists: the first gets thousands of listeners a day (register mode), the last a few.
        var generator = EventGenerator(.init(seed: 3, artists: 40, days: 2, start: Self.start, tracksPerArtist: 300))
        var delta = RollupDelta()
        for _ in 0..<40_000 { if let event = generator.next().event { delta.add(event) } }
        var open = CubeMemory()
        open.add(delta)
        var sealed = open
        #expect(sealed.seal(daysBefore: Self.firstDay + 2) == 2)
        #expect(sealed.byteCount < open.byteCount)
        let days = Self.firstDay..<Self.firstDay + 2
        var sizes: Set<Bool> = []
        for artist in [EventGenerator.artistID(0), EventGenerator.artistID(39)] {
            let scope = ListenerScope(artistID: artist, days: days)
            let perDay = sealed.listenerSketches(scope, granularity: .day)
            #expect(perDay == open.listenerSketches(scope, granularity: .day))
            for sketch in perDay.values { sizes.insert(sketch.cardinality > Double(HyperLogLog.explicitLimit)) }
            let tracks = Set(delta.trackListeners.keys.filter { $0.artistID == artist }.map(\.trackID)).sorted()
            #expect(sealed.keyedSketches(.listeners, artistID: artist, keys: tracks, days: days)
                    == open.keyedSketches(.listeners, artistID: artist, keys: tracks, days: days))
        }
        #expect(sizes == [true, false], "both register-mode and explicit-mode day sketches were compared")
    }

    @Test func retentionAndBudgetDropTheOldestDaysAndMoveTheHorizon() throws {
        let first = Self.deltas().first
        var memory = CubeMemory()
        memory.add(first)
        memory.seal(daysBefore: Self.firstDay + 100)
        let dropped = memory.retain(fromDay: Self.firstDay + 2, budgetBytes: .max)
        #expect(dropped == [Self.firstDay, Self.firstDay + 1])
        #expect(memory.horizonDay == Self.firstDay + 2)

        let full = memory.byteCount
        memory.retain(fromDay: Self.firstDay + 2, budgetBytes: full / 2)
        #expect(memory.byteCount <= full / 2)
        let horizon = memory.horizonDay
        #expect(horizon > Self.firstDay + 2)
        #expect(memory.dayRange?.lowerBound == horizon)
        // What is still held answers exactly; events before the horizon are not taken in again.
        let query = Query(
            dataset: .streams, interval: QueryInterval(from: Timestamp(seconds: horizon * 86_400), to: Timestamp(seconds: (Self.firstDay + 12) * 86_400)),
            granularity: .day, groupBy: [.platform], filters: [.artistID: [EventGenerator.artistID(0)]])
        try expectSame(memory.rows(for: query), bruteForce(query, first), query)
        memory.add(first)
        #expect(memory.dayRange?.lowerBound == horizon)
    }

    @Test func fullDimensionQueriesAreNotAnsweredFromMemory() {
        let memory = CubeMemory()
        let query = Query(
            dataset: .streams, interval: QueryInterval(from: Timestamp(seconds: 0), to: Timestamp(seconds: 86_400)),
            granularity: .day, groupBy: [.trackID, .platform])
        #expect(memory.rows(for: query) == nil)
    }

    // MARK: - Oracle: a scan of the full hourly rows, written independently of the buckets

    func bruteForce(_ query: Query, _ delta: RollupDelta) -> [QueryRow] {
        var sums: [[String]: [MetricValue]] = [:]
        func add(_ hour: HourBucket, _ value: (Dimension) -> String, _ metrics: [MetricValue]) {
            guard hour.start >= query.interval.from && hour.start < query.interval.to else { return }
            for (dimension, allowed) in query.filters where !allowed.contains(value(dimension)) { return }
            let period = query.granularity == .all ? "" : String(query.granularity.periodStart(of: hour.start).seconds)
            let key = [period] + query.groupBy.map(value)
            sums[key] = sums[key].map { zip($0, metrics).map { pair in
                switch pair {
                case (.integer(let a), .integer(let b)): MetricValue.integer(a + b)
                case (.money(let a), .money(let b)): MetricValue.money(a + b)
                default: pair.0
                }
            } } ?? metrics
        }
        switch query.dataset {
        case .streams:
            for (key, c) in delta.streams { add(key.hour, key.value(of:), [.integer(c.streams), .integer(c.skips), .integer(c.listeningMs)]) }
        case .revenue:
            for (key, c) in delta.revenue { add(key.hour, key.value(of:), [.money(c.amount), .integer(c.events)]) }
        case .social:
            for (key, count) in delta.social { add(key.hour, key.value(of:), [.integer(count)]) }
        case .page:
            for (key, count) in delta.page { add(key.hour, key.value(of:), [.integer(count)]) }
        case .funnel:
            // Counted when sessions meet their stored states (`Store.mergeSessions`), not per event: none here.
            break
        }
        return sums.map { key, metrics in
            QueryRow(periodStart: key[0].isEmpty ? nil : Timestamp(seconds: Int64(key[0])!), groupValues: Array(key.dropFirst()), metrics: metrics)
        }
    }

    func expectSame(_ actual: [QueryRow]?, _ expected: [QueryRow], _ query: Query, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let actual = try #require(actual, "not answered from memory: \(query)", sourceLocation: sourceLocation)
        let order = { (lhs: QueryRow, rhs: QueryRow) in
            (lhs.periodStart?.microseconds ?? 0, lhs.groupValues.joined(separator: "|")) < (rhs.periodStart?.microseconds ?? 0, rhs.groupValues.joined(separator: "|"))
        }
        #expect(actual.sorted(by: order) == expected.sorted(by: order), "\(query)", sourceLocation: sourceLocation)
        #expect(!expected.isEmpty || query.filters[.artistID] == ["artist-9999"], "the oracle found nothing for \(query)", sourceLocation: sourceLocation)
    }
}
