import BackbeatCore
import BackbeatTestSupport
import Testing

/// The stored block of a cube's artist-day (`CubeBlock`) gives back its rows; a block merged with another is the
/// block of both deltas' events; damaged bytes are refused, never read past.
@Suite struct CubeBlockTests {
    static let start = CivilDate(year: 2026, month: 10, day: 1)

    static func events(seed: UInt64, count: Int) -> [Event] {
        var generator = EventGenerator(.init(seed: seed, artists: 5, days: 3, start: start, pageFraction: 0.2))
        return (0..<count).compactMap { _ in generator.next().event }
    }

    /// Each artist-day's rows, keyed by artist, day, slot of the day and values.
    static func rows(_ days: [CubeDay], of cube: Cube, _ delta: InternedDelta) -> [String: CubeRowSums] {
        rows(days, of: cube, delta.values)
    }

    static func rows(_ days: [CubeDay], of cube: Cube, _ values: ValueDictionary) -> [String: CubeRowSums] {
        var rows: [String: CubeRowSums] = [:]
        let width = cube.dimensions.count
        for day in days {
            for row in 0..<day.rowCount {
                let texts = day.values[row * width ..< (row + 1) * width].map { value in
                    if case .id(let id) = value { values[id] } else { value.fixedText ?? "" }
                }
                let slot = day.slots.isEmpty ? "" : String(day.slots[row])
                rows[([values[day.artist], String(day.day), slot] + texts).joined(separator: "|")] = day.sums[row]
            }
        }
        return rows
    }

    static func rows(_ blocks: [(artist: String, day: Int64, rows: BlockRows)]) -> [String: CubeRowSums] {
        var rows: [String: CubeRowSums] = [:]
        for block in blocks {
            for row in 0..<block.rows.count {
                let slot = block.rows.slots.isEmpty ? "" : String(block.rows.slots[row])
                rows[([block.artist, String(block.day), slot] + block.rows.values(of: row)).joined(separator: "|")] = block.rows.sums[row]
            }
        }
        return rows
    }

    @Test func aBlockGivesBackTheRowsOfItsArtistDay() throws {
        let delta = InternedDelta(events: Self.events(seed: 3, count: 4_000)).withSessionsCounted()
        let grouped = ArtistDayRows(delta)
        for cube in Cube.all {
            let days = grouped.days(of: cube)
            let decoded = try days.map { day in
                (artist: delta.values[day.artist], day: day.day, rows: try CubeBlock.decode(CubeBlock.encode(day, of: cube, values: delta.values), of: cube))
            }
            let expected = Self.rows(days, of: cube, delta)
            #expect(Self.rows(decoded) == expected && !expected.isEmpty, "\(cube.table)")
            #expect(decoded.allSatisfy { $0.rows.slots.isEmpty == (cube.grain == .day) })
            #expect(decoded.allSatisfy { $0.rows.slots.allSatisfy { $0 >= 0 && Int64($0) < cube.grain.slotsPerDay } })
            if cube.grain == .quarterHour {
                #expect(decoded.contains { $0.rows.slots.contains { $0 % 4 != 0 } }, "\(cube.table): no row off the hour")
            }
        }
    }

    /// Deltas combined, then one more added (a flush's funnel changes), read as all of them combined at once.
    @Test func aDeltaAddedToCombinedDeltasReadsAsAllCombined() {
        let events = Self.events(seed: 7, count: 3_000)
        let parts = [InternedDelta(events: events[..<1_000]), InternedDelta(events: events[1_000..<2_000])]
        let last = InternedDelta(events: events[2_000...]).withSessionsCounted()
        for first in [Array(parts.prefix(1)), parts] {
            let added = CombinedDeltas(first).adding(last), whole = CombinedDeltas(first + [last])
            let (addedRows, wholeRows) = (added.artistDayRows(), whole.artistDayRows())
            for cube in Cube.all {
                func read(_ rows: ArtistDayRows, _ values: ValueDictionary) -> [String: CubeRowSums] {
                    Self.rows(rows.days(of: cube), of: cube, values)
                }
                let expected = read(wholeRows, whole.values)
                #expect(read(addedRows, added.values) == expected && !expected.isEmpty, "\(cube.table)")
            }
        }
    }

    /// Two flushes' blocks of an artist-day, merged, make byte for byte the block of one flush of all their events.
    @Test func mergedBlocksAreTheBlockOfAllTheirEvents() throws {
        let events = Self.events(seed: 5, count: 6_000)
        let first = InternedDelta(events: events[..<2_500]).withSessionsCounted(), second = InternedDelta(events: events[2_500...]).withSessionsCounted()
        let one = InternedDelta(events: events)
        // The funnel's rows are the changes each flush made (sessions counted as new in each here): the whole is their sum.
        var changes = first
        changes.merge(second)
        for cube in Cube.all {
            let all = cube.dataset == .funnel ? changes : one
            func blocks(_ delta: InternedDelta) -> [String: [UInt8]] {
                Dictionary(uniqueKeysWithValues: ArtistDayRows(delta).days(of: cube).map { day in
                    ("\(delta.values[day.artist])|\(day.day)", CubeBlock.encode(day, of: cube, values: delta.values))
                })
            }
            let (firsts, seconds, expected) = (blocks(first), blocks(second), blocks(all))
            var merged = 0
            for (key, block) in expected {
                let parts = try [firsts[key], seconds[key]].compactMap { $0 }.map { try CubeBlock.decode($0, of: cube) }
                let rows = parts.dropFirst().reduce(parts[0]) { $0.merging($1) }
                #expect(CubeBlock.encode(rows, of: cube) == block, "\(cube.table) \(key)")
                if parts.count == 2 { merged += 1 }
            }
            #expect(merged > 10, "\(cube.table): \(merged) artist-days in both flushes")
        }
    }

    /// A block whose keys would pass 64 bits as one number (five dimensions of 7,000 values each) is written with
    /// its keys in columns (version 4 by quarter hour) and reads back the same; an everyday one packs them (version 3).
    @Test func keysTooWideForOneNumberAreWrittenInColumns() throws {
        let cube = try #require(Cube.all.first { $0.table == "stream_hourly" })
        let rows = Self.wideRows(slots: 96)
        let block = CubeBlock.encode(rows, of: cube)
        #expect(block.first == 4)
        let decoded = try CubeBlock.decode(block, of: cube)
        #expect(CubeBlock.encode(decoded, of: cube) == block)
        #expect(Self.described(decoded) == Self.described(rows))
        #expect(CubeBlock.encode(Self.oneRow(slot: 3), of: cube).first == 3)
    }

    /// Blocks written while the full tables kept hours (versions 1 and 2) read as rows at the first quarter of their
    /// hour; an hourly cube is still written in those versions.
    @Test func hourlyBlocksOfTheFullTablesReadAsQuarterHours() throws {
        let quarters = try #require(Cube.all.first { $0.table == "stream_hourly" })
        let hours = try #require(Cube.all.first { $0.table == "streams_by_artist_hour" })
        // The same bytes with the version that says "hours": what a block of before looked like.
        var packed = CubeBlock.encode(Self.oneRow(slot: 3), of: quarters)
        packed[0] = 2
        #expect(try CubeBlock.decode(packed, of: quarters).slots == [12])
        let wide = Self.wideRows(slots: 24)
        var columns = CubeBlock.encode(wide, of: quarters)
        columns[0] = 1
        var expected = wide
        expected.slots = wide.slots.map { $0 * 4 }
        #expect(Self.described(try CubeBlock.decode(columns, of: quarters)) == Self.described(expected))
        var hourly = BlockRows(dimensions: 0)
        hourly.slots = [5, 23]
        hourly.sums = [CubeRowSums(), CubeRowSums()]
        let block = CubeBlock.encode(hourly, of: hours)
        let decoded = try CubeBlock.decode(block, of: hours)
        #expect(block.first == 2 && decoded == hourly)
    }

    /// Rows of five dimensions of 7,000 values each, at slots below `slots`.
    static func wideRows(slots: Int) -> BlockRows {
        var rows = BlockRows(dimensions: 5)
        for row in 0..<7_000 {
            rows.slots.append(Int16(row % slots))
            for dimension in 0..<5 {
                rows.dictionaries[dimension].append("v\(dimension)-\(row)")
                rows.indexes[dimension].append(row)
            }
            var sums = CubeRowSums()
            sums.integers = (Int64(row), -1, Int64.max - Int64(row))
            rows.sums.append(sums)
        }
        return rows
    }

    static func oneRow(slot: Int16) -> BlockRows {
        var small = BlockRows(dimensions: 5)
        small.slots = [slot]
        small.dictionaries = [["t"], ["p"], ["c"], ["a"], ["g"]]
        small.indexes = [[0], [0], [0], [0], [0]]
        small.sums = [CubeRowSums()]
        return small
    }

    static func described(_ rows: BlockRows) -> Set<String> {
        Set((0..<rows.count).map { "\(rows.slots[$0]) \(rows.values(of: $0)) \(rows.sums[$0].integers)" })
    }

    /// Every cut of a block, and a block with bytes after its end or a wrong version, is refused; flipped bytes are
    /// refused or read as some other rows, never past the block's end.
    @Test func damagedBlocksAreRefused() throws {
        let delta = InternedDelta(events: Self.events(seed: 9, count: 1_500)).withSessionsCounted()
        var random = TestRandom()
        for cube in Cube.all {
            let day = try #require(ArtistDayRows(delta).days(of: cube).first)
            let block = CubeBlock.encode(day, of: cube, values: delta.values)
            for length in 0..<block.count {
                #expect(throws: CubeBlock.FormatError.self) { try CubeBlock.decode(Array(block[..<length]), of: cube) }
            }
            #expect(throws: CubeBlock.FormatError.self) { try CubeBlock.decode(block + [0], of: cube) }
            #expect(throws: CubeBlock.FormatError.self) { try CubeBlock.decode([5] + block.dropFirst(), of: cube) }
            #expect(throws: CubeBlock.FormatError.self) { try CubeBlock.decode([0] + block.dropFirst(), of: cube) }
            for _ in 0..<300 {
                var damaged = block
                damaged[Int(random.next() % UInt64(block.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                _ = try? CubeBlock.decode(damaged, of: cube)
            }
        }
    }
}

/// A query answered from the blocks of a delta's artist-days (`BlockAnswer`, as `Store.rows` answers from PostgreSQL)
/// is what memory answers for the same events, for every dashboard cube, granularity, filter, artist left out and
/// grouping tried.
@Suite struct BlockAnswerTests {
    @Test func blocksAnswerWhatMemoryAnswers() throws {
        let events = CubeBlockTests.events(seed: 21, count: 5_000)
        let delta = InternedDelta(events: events)
        var memory = CubeMemory()
        memory.add(delta)
        let grouped = ArtistDayRows(delta)
        let start = CubeBlockTests.start.daysSinceEpoch * 86_400
        var random = TestRandom()
        var compared = 0
        for _ in 0..<300 {
            let dataset = [Dataset.streams, .revenue, .social][Int(random.next() % 3)]
            let dimensions = dataset.dimensions.filter { _ in random.next() % 3 == 0 }
            let granularity = Granularity.allCases[Int(random.next() % UInt64(Granularity.allCases.count))]
            // Day-aligned intervals, and (for hours) ones that start and end inside a day.
            let aligned = granularity != .hour || random.next() % 2 == 0
            let from = start + Int64(random.next() % 3) * 86_400 + (aligned ? 0 : Int64(random.next() % 24) * 3600)
            let to = from + Int64(1 + random.next() % 3) * 86_400 - (aligned ? 0 : Int64(random.next() % 12) * 3600)
            var filters: [Dimension: [String]] = [:]
            if random.next() % 2 == 0 { filters[.artistID] = [events.compactMap(\.artistIDIfAny)[Int(random.next() % 50)]] }
            var query = Query(dataset: dataset, interval: QueryInterval(from: Timestamp(seconds: from), to: Timestamp(seconds: to)),
                              granularity: granularity, groupBy: Array(dimensions.prefix(2)), filters: filters)
            if random.next() % 3 == 0 { query.excludedArtists = [events.compactMap(\.artistIDIfAny)[Int(random.next() % 50)]] }
            guard let expected = memory.rows(for: query) else { continue }
            var answer = BlockAnswer(query)
            for day in grouped.days(of: answer.cube) {
                answer.add(artist: delta.values[day.artist], day: day.day,
                           try CubeBlock.decode(CubeBlock.encode(day, of: answer.cube, values: delta.values), of: answer.cube))
            }
            let key = { (row: QueryRow) in "\(row.periodStart?.seconds ?? -1)|\(row.groupValues)" }
            let read = Dictionary(uniqueKeysWithValues: answer.rows.map { (key($0), $0.metrics) })
            #expect(read == Dictionary(uniqueKeysWithValues: expected.map { (key($0), $0.metrics) }), "\(query)")
            compared += 1
        }
        #expect(compared > 100)
    }
}

extension Event {
    var artistIDIfAny: String? {
        switch self {
        case .stream(let play): play.artistID
        case .revenue(let revenue): revenue.artistID
        case .social(let social): social.artistID
        case .page(let page): page.artistID
        }
    }
}
