import BackbeatCore
import PostgresNIO
import Synchronization

/// The first day of each month, as days since the epoch (UTC).
enum MonthDays {
    /// The first day of the month holding `day`.
    static func start(of day: Int64) -> Int64 {
        CivilDate(daysSinceEpoch: day).firstOfMonth.daysSinceEpoch
    }

    /// The first day of the month after the one starting on `month`.
    static func next(after month: Int64) -> Int64 {
        CivilDate(daysSinceEpoch: month).firstOfNextMonth.daysSinceEpoch
    }

    /// The whole months inside the days `from..<to` whose month rows exist (before `rolledTo`): their first days
    /// `lower..<upper`, nil when there is none.
    static func whole(from: Int64, to: Int64, rolledTo: Int64?) -> Range<Int64>? {
        guard let rolledTo else { return nil }
        let lower = start(of: from) == from ? from : next(after: start(of: from))
        let upper = min(start(of: to), rolledTo)
        return lower < upper ? lower..<upper : nil
    }
}

/// The latest `month_rolls.rolled_to` a statement saw (migration 0020), shared by every copy of a store: reads split
/// their intervals by it without asking, and check it in the same statement (`Store.rows(for:)`).
final class KnownMonthRolls: Sendable {
    private static let unknown = Int64.min
    private let value = Atomic<Int64>(KnownMonthRolls.unknown)

    /// The months before this day have month rows, as last seen (nil: none, or not seen yet).
    var rolledTo: Int64? {
        let day = value.load(ordering: .relaxed)
        return day == Self.unknown ? nil : day
    }

    func saw(_ rolledTo: Int64?) {
        value.store(rolledTo ?? Self.unknown, ordering: .relaxed)
    }
}

/// What one pass of `Store.rollMonths` did.
public struct MonthRollOutcome: Sendable, Equatable {
    /// The months rolled, by their first day (days since the epoch).
    public var rolled: [Int64] = []
}

extension Store {
    /// Runs `read` with the whole months inside `days` that have month rows, as this store last saw them (nil: none,
    /// or `days` nil: the read takes none), and returns its result. `read` reports the `month_rolls.rolled_to` its
    /// statement saw (the outer nil: it returned no row to tell): when the months it read from month rows go past
    /// that (the rolls were undone meanwhile), it is run again with the months that exist.
    func readingMonthRows<Result>(
        of days: Range<Int64>?, _ read: (Range<Int64>?) async throws -> (result: Result, rolledTo: Int64??)
    ) async throws -> Result {
        try await readingMonthRows(of: [days]) { try await read($0[0]) }
    }

    /// `readingMonthRows(of:_:)` for several reads in one statement: `read` is handed the whole months of each of
    /// `days`, in their order, and run again when any of them goes past the rolls its statement saw.
    func readingMonthRows<Result>(
        of days: [Range<Int64>?], _ read: ([Range<Int64>?]) async throws -> (result: Result, rolledTo: Int64??)
    ) async throws -> Result {
        var rolledTo = knownMonthRolls.rolledTo
        while true {
            let months = days.map { $0.flatMap { MonthDays.whole(from: $0.lowerBound, to: $0.upperBound, rolledTo: rolledTo) } }
            let (result, seen) = try await read(months)
            guard let seen else { return result }
            knownMonthRolls.saw(seen)
            guard months.contains(where: { $0.map { $0.upperBound > seen ?? .min } ?? false }) else { return result }
            rolledTo = seen
        }
    }

    /// Where the month rows a read may take whole months from end, as far as this store has seen (a month's first
    /// day; nil: none seen): the months rolled, but not the month of two days before `today`, whose late events may
    /// still be on their way to PostgreSQL (an instance answering from memory reads those days there).
    public func monthRowsEnd(today: Int64) -> Int64? {
        knownMonthRolls.rolledTo.map { min($0, MonthDays.start(of: today - 2)) }
    }

    /// Rolls every month that ended before `today`'s (days since the epoch, UTC) and has no month rows yet (migration 0020): one transaction per month, oldest
    /// first, under the maintenance lock (a rebuild or retention waits, and is waited for). Each sums the month's
    /// day rows of every dashboard cube and listener sketch, per artist, into its month rows, and moves
    /// `month_rolls.rolled_to` past it. The first pass starts at the first month stored.
    ///
    /// A flush holds `month_rolls`' row shared from its start (`writeAggregates`), so a month is rolled between
    /// flushes: none is half in its rows.
    public func rollMonths(today: Int64) async throws -> MonthRollOutcome {
        let limit = MonthDays.start(of: today)
        var outcome = MonthRollOutcome()
        while true {
            let rolled = try await client.withTransaction(logger: logger) { connection -> Int64? in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.maintenanceLock))", logger: logger)
                var rolledTo = try await monthsRolledTo(locking: "FOR UPDATE", on: connection)
                if rolledTo == nil {
                    rolledTo = min(try await firstStoredMonth(on: connection) ?? limit, limit)
                    try await setMonthsRolledTo(rolledTo, on: connection)
                }
                guard let month = rolledTo, month < limit else { return nil }
                try await rollMonth(month, on: connection)
                try await setMonthsRolledTo(MonthDays.next(after: month), on: connection)
                return month
            }
            guard let rolled else { return outcome }
            outcome.rolled.append(rolled)
        }
    }

    /// `month_rolls.rolled_to`, its row locked as `locking` says (`FOR SHARE`, `FOR UPDATE`), and noted for reads.
    func monthsRolledTo(locking: String, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT (rolled_to - date '1970-01-01')::bigint FROM month_rolls \(locking)
            """), logger: logger)
        for try await day in rows.decode(Int64?.self) {
            knownMonthRolls.saw(day)
            return day
        }
        return nil
    }

    private func setMonthsRolledTo(_ day: Int64?, on connection: PostgresConnection) async throws {
        try await connection.query(
            "UPDATE month_rolls SET rolled_to = date '1970-01-01' + \(day.map(Int32.init))::integer", logger: logger)
        knownMonthRolls.saw(day)
    }

    /// The first day of the earliest month any dashboard cube or listener sketch stores (nil: none stored).
    private func firstStoredMonth(on connection: PostgresConnection) async throws -> Int64? {
        let tables = Cube.derived.map { AggregateTable($0).days } + SketchFamily.all.flatMap { [$0.artists.stored, $0.keyed.stored] }
        let firsts = tables.map { "(SELECT min(day) FROM \($0))" }.joined(separator: ", ")
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT (date_trunc('month', least(\(firsts)))::date - date '1970-01-01')::bigint
            """), logger: logger)
        for try await day in rows.decode(Int64?.self) { return day }
        return nil
    }

    /// Replaces the month rows of `month` (its first day) with the sums of its day rows, per artist: each dashboard
    /// cube's blocks merged here, the listener sketches unioned in PostgreSQL.
    func rollMonth(_ month: Int64, on connection: PostgresConnection) async throws {
        let end = MonthDays.next(after: month)
        for cube in Cube.derived {
            let table = AggregateTable(cube)
            guard let months = table.months else { continue }
            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(months) WHERE day = date '1970-01-01' + \(month)"), logger: logger)
            // Artist after artist: only the month rows made so far are held, not the month's days.
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT artist_id, block FROM \(table.days)
                WHERE day >= date '1970-01-01' + \(month) AND day < date '1970-01-01' + \(end) ORDER BY artist_id
                """), logger: logger)
            var blocks: [StagedBlock] = []
            var current: (artist: String, rows: BlockRows)?
            for try await (artist, block) in rows.decode((String, ByteBuffer).self) {
                let decoded = try CubeBlock.decode(Array(block.readableBytesView), of: cube)
                if let sum = current, sum.artist == artist {
                    current = (artist, sum.rows.merging(decoded))
                    continue
                }
                if let sum = current { blocks.append(StagedBlock(artistID: sum.artist, day: month, block: CubeBlock.encode(sum.rows, of: cube))) }
                current = (artist, decoded)
            }
            if let sum = current { blocks.append(StagedBlock(artistID: sum.artist, day: month, block: CubeBlock.encode(sum.rows, of: cube))) }
            try await append(blocks, to: months, columns: ["artist_id", "day", "block"], on: connection, Self.encode)
        }
        let days = "day >= date '1970-01-01' + \(month) AND day < date '1970-01-01' + \(end)"
        for family in SketchFamily.all {
            let (artists, keyed, key, sketch) = (family.artists, family.keyed, family.key, family.column)
            for table in [artists, keyed] {
                try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table.months!) WHERE day = date '1970-01-01' + \(month)"), logger: logger)
            }
            try await connection.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(artists.months!) (artist_id, day, \(sketch))
                SELECT artist_id, date '1970-01-01' + \(month), hll_union_agg(\(sketch)) FROM \(artists.stored) WHERE \(days)
                GROUP BY artist_id
                """), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: """
                INSERT INTO \(keyed.months!) (artist_id, day, \(key), \(sketch))
                SELECT artist_id, date '1970-01-01' + \(month), array_agg(key ORDER BY key), array_agg(sketch ORDER BY key)
                FROM (
                    SELECT d.artist_id, t.key, hll_union_agg(t.sketch) AS sketch
                    FROM \(keyed.stored) d, unnest(d.\(key), d.\(sketch)) AS t(key, sketch) WHERE \(days)
                    GROUP BY 1, 2
                ) per_key
                GROUP BY artist_id
                """), logger: logger)
        }
    }

    /// Merges the rows of `blocks` (a flush's blocks of `cube`, by artist-day) that fall in a rolled month (before
    /// `rolledTo`) into the cube's month rows: a late event or a replayed one counts in its month as in its day.
    func mergeMonths(_ blocks: [StagedBlock], of cube: Cube, rolledTo: Int64?, on connection: PostgresConnection) async throws {
        guard let rolledTo, let months = AggregateTable(cube).months else { return }
        let early = blocks.filter { $0.day < rolledTo }
        guard !early.isEmpty else { return }
        let monthly = try await computed { Result { try StagedBlock.summed(early, of: cube, by: MonthDays.start(of:)) } }.get()
        try await mergeBlocks(monthly, of: cube, into: months, on: connection)
    }

    /// Unions the sketches of `artists` and `tracks` (a flush's of `family`, by artist-day) that fall in a rolled month
    /// (before `rolledTo`) into the family's month rows.
    func mergeMonths(
        _ family: SketchFamily, artists: [ArtistListenersDay], tracks: [TrackListenersDay], rolledTo: Int64?, on connection: PostgresConnection
    ) async throws {
        guard let rolledTo else { return }
        var artistMonths: [ArtistDayKey: HyperLogLog] = [:]
        for day in artists where day.day < rolledTo {
            artistMonths[ArtistDayKey(artistID: day.artistID, day: MonthDays.start(of: day.day)), default: HyperLogLog()].formUnion(day.sketch)
        }
        var trackMonths: [ArtistDayKey: [String: HyperLogLog]] = [:]
        for day in tracks where day.day < rolledTo {
            let key = ArtistDayKey(artistID: day.artistID, day: MonthDays.start(of: day.day))
            for (track, sketch) in zip(day.tracks, day.sketches) { trackMonths[key, default: [:]][track, default: HyperLogLog()].formUnion(sketch) }
        }
        guard !artistMonths.isEmpty || !trackMonths.isEmpty else { return }
        try await mergeSketches(
            family, artists: artistMonths.map { ArtistListenersDay(artistID: $0.key.artistID, day: $0.key.day, sketch: $0.value) },
            into: family.artists.months!,
            tracks: trackMonths.map { key, sketches in
                let ordered = sketches.keys.sorted()
                return TrackListenersDay(artistID: key.artistID, day: key.day, tracks: ordered, sketches: ordered.map { sketches[$0]! })
            },
            into: family.keyed.months!, on: connection)
    }
}

extension StagedBlock {
    /// `blocks` (of `cube`) summed by artist and `day(block.day)`: one block per artist and day so named (the block's
    /// own day, or its month's first day for month rows).
    static func summed(_ blocks: [StagedBlock], of cube: Cube, by day: (Int64) -> Int64 = { $0 }) throws -> [StagedBlock] {
        var sums: [ArtistDayKey: BlockRows] = [:]
        for block in blocks {
            let key = ArtistDayKey(artistID: block.artistID, day: day(block.day))
            let rows = try CubeBlock.decode(block.block, of: cube)
            sums[key] = sums[key].map { $0.merging(rows) } ?? rows
        }
        return sums.map { StagedBlock(artistID: $0.key.artistID, day: $0.key.day, block: CubeBlock.encode($0.value, of: cube)) }
    }
}
