@testable import BackbeatCore
import Foundation
import Testing

/// An artist's stored detail moved to a new zone (`ZoneRecount`) holds, on every day it says it counts, exactly the
/// rows its events make when counted in the new zone from the start: the events are generated over Los Angeles' change
/// of 2026-11-01, counted in the old zone, stored as blocks (encoded and decoded as PostgreSQL keeps them), moved, and
/// compared quarter hour by quarter hour with the same events counted in the new zone.
@Suite struct ZoneRecountTests {
    static let start = CivilDate(year: 2026, month: 10, day: 29)
    static let artist = "artist-0001"

    /// Every full-dimension row of `delta`, by dataset, artist, quarter hour and values (as text), with its sums.
    static func rows(_ delta: InternedDelta) -> [String: CubeRowSums] {
        var rows: [String: CubeRowSums] = [:]
        func key<Cell: InternedRowKey>(_ cell: Cell, _ cube: Cube) -> String {
            let values = cube.dimensions.map { dimension -> String in
                let value = cell.value(of: dimension)
                if case .id(let id) = value { return delta.values[id] }
                return value.fixedText ?? ""
            }
            return ([cube.table, delta.values[cell.artist], String(cell.quarter)] + values).joined(separator: "|")
        }
        let cubes = Dictionary(uniqueKeysWithValues: Cube.all.filter(\.isFull).map { ($0.dataset, $0) })
        for (cell, counters) in delta.streams.rows { rows[key(cell, cubes[.streams]!), default: CubeRowSums()] += CubeRowSums(counters) }
        for (cell, counters) in delta.revenue.rows { rows[key(cell, cubes[.revenue]!), default: CubeRowSums()] += CubeRowSums(counters) }
        for (cell, count) in delta.social.rows { rows[key(cell, cubes[.social]!), default: CubeRowSums()] += CubeRowSums(count: count) }
        return rows
    }

    /// Up to five keys whose sums differ between `rows` and `expected` (a whole dictionary would flood a failure).
    static func differences(_ rows: [String: CubeRowSums], _ expected: [String: CubeRowSums]) -> [String] {
        Array(Set(rows.keys).union(expected.keys).filter { rows[$0] != expected[$0] }.sorted().prefix(5))
    }

    /// The day (of the counting zone) of a `rows` key.
    static func day(_ key: String) -> Int64 { Int64(key.split(separator: "|")[2])!.floorDiv(96) }

    /// The generator's events of one artist over six days, counted in `zone`.
    static func counted(in zone: ZoneRules) -> InternedDelta {
        var generator = EventGenerator(.init(seed: 3, artists: 1, days: 6, start: start, invalidFraction: 0, tracksPerArtist: 5))
        var delta = InternedDelta(zones: ArtistZones([artist: zone]))
        let now = Timestamp(seconds: (start.daysSinceEpoch + 10) * 86_400)
        for _ in 0..<30_000 {
            guard let value = generator.next().value else { continue }
            value.withUnsafeBytes { bytes in
                if case .success(let record) = EventDecoder.decodeRecord(bytes: bytes, now: now) { delta.add(record, in: bytes) }
            }
        }
        return delta
    }

    /// `delta`'s full-dimension blocks moved to `new` through `ZoneRecount` (as PostgreSQL holds them: encoded).
    static func moved(_ delta: InternedDelta, from old: ZoneRules, to new: ZoneRules, completeFromOldDay: Int64? = nil) throws -> ZoneRecount {
        var recount = ZoneRecount(artistID: artist, from: old, to: new, completeFromOldDay: completeFromOldDay)
        let rows = CombinedDeltas([delta]).artistDayRows()
        for cube in Cube.all where cube.isFull {
            var blocks: [(Int64, [UInt8])] = []
            rows.forEachDay(of: cube) { day in blocks.append((day.day, CubeBlock.encode(day, of: cube, values: delta.values))) }
            for (day, block) in blocks { recount.add(try CubeBlock.decode(block, of: cube), ofDay: day, in: cube) }
        }
        return recount
    }

    @Test func fromUTCEveryRowLandsWhereTheNewZoneCountsIt() throws {
        let la = try ZoneRulesTests.rules("America/Los_Angeles")
        let recount = try Self.moved(Self.counted(in: .utc), from: .utc, to: la)
        let expected = Self.rows(Self.counted(in: la))
        #expect(expected.count > 1_000 && recount.movedRows > 1_000)
        #expect(recount.countsMissing.isEmpty && recount.countsFrom == nil)
        #expect(Self.differences(Self.rows(recount.delta), expected) == [])
    }

    /// Los Angeles' repeated hour (01:00-02:00 on 2026-11-01) lands on two hours of Kolkata's clock: that day is said
    /// to be missing, every other day is exact.
    @Test func aRepeatedHourLeavesItsDayOutAndEveryOtherDayExact() throws {
        let la = try ZoneRulesTests.rules("America/Los_Angeles"), kolkata = try ZoneRulesTests.rules("Asia/Kolkata")
        let old = Self.counted(in: la)
        let fallBack = CivilDate(year: 2026, month: 11, day: 1).daysSinceEpoch
        // The generator put events in the repeated hour (else the test proves nothing).
        #expect(Self.rows(old).keys.contains { key in
            let quarter = Int64(key.split(separator: "|")[2])!
            return quarter >= fallBack * 96 + 4 && quarter < fallBack * 96 + 8
        })
        let recount = try Self.moved(old, from: la, to: kolkata)
        #expect(recount.countsMissing == [fallBack])
        let moved = Self.rows(recount.delta)
        let expected = Self.rows(Self.counted(in: kolkata)).filter { Self.day($0.key) != fallBack }
        #expect(Self.differences(moved, expected) == [])
        #expect(!expected.isEmpty)
    }

    /// Counts kept from an old day on: the new zone's first day that begins inside them is the first counted, and no
    /// row of an earlier day is moved.
    @Test func countsBeginOnTheFirstNewDayInsideTheDetail() throws {
        let la = try ZoneRulesTests.rules("America/Los_Angeles"), kolkata = try ZoneRulesTests.rules("Asia/Kolkata")
        let first = Self.start.daysSinceEpoch + 2
        // UTC's day begins at 17:00 of Los Angeles' day before: that LA day is not whole, the next is.
        let fromUTC = try Self.moved(Self.counted(in: .utc), from: .utc, to: la, completeFromOldDay: first)
        #expect(fromUTC.countsFrom == first)
        // Los Angeles' day begins at 12:30 in Kolkata: the next Kolkata day is the first whole one.
        let fromLA = try Self.moved(Self.counted(in: la), from: la, to: kolkata, completeFromOldDay: first)
        #expect(fromLA.countsFrom == first + 1)
        let moved = Self.rows(fromLA.delta)
        #expect(!moved.isEmpty && moved.keys.allSatisfy { Self.day($0) >= first + 1 })
        let expected = Self.rows(Self.counted(in: kolkata)).filter { Self.day($0.key) >= first + 1 && !fromLA.countsMissing.contains(Self.day($0.key)) }
        #expect(Self.differences(moved, expected) == [])
    }

    /// Days an earlier change left without counts stay without them on the new clock: every day of the new zone they
    /// overlap.
    @Test func daysMissingBeforeStayMissing() throws {
        let kathmandu = try ZoneRulesTests.rules("Asia/Kathmandu")
        let gap = Self.start.daysSinceEpoch + 3
        let recount = ZoneRecount(artistID: Self.artist, from: .utc, to: kathmandu, completeFromOldDay: nil, missingOldDays: [gap])
        #expect(recount.countsMissing == [gap, gap + 1])
    }
}
