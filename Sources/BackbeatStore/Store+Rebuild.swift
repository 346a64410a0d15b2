import BackbeatCore
import PostgresNIO

extension Store {
    /// The advisory lock rebuild and retention take, so that one never drops or swaps what the other is changing
    /// (the value compaction's lock had before migration 0018: migrations 0014-0018 take it too).
    public static let maintenanceLock: Int64 = 0x6261_636B_6265_6174  // "backbeat"

    /// Replaces the aggregates of the days `fromDay...toDay` (`rebuild(.days(fromDay...toDay))`).
    @discardableResult
    public func rebuild(
        fromDay: Int64, toDay: Int64,
        compute: @Sendable (CountedInputs) async throws -> (delta: InternedDelta, events: Int64)
    ) async throws -> Int64 {
        try await rebuild(.days(fromDay...toDay), compute: compute)
    }

    /// What a rebuild replaces.
    public enum RebuildScope: Sendable {
        /// Every artist's days `fromDay...toDay` (each artist's local days).
        case days(ClosedRange<Int64>)
        /// Every stored day of one artist, counted again in `zone`, which is recorded as the artist's in the same
        /// transaction (`backbeat artist set-zone` with archives): the days from two before the earliest the artist
        /// has stored (a day of the new zone may begin up to 26 hours before one of the old), to the last.
        case artist(String, zone: ZoneName)
    }

    /// Replaces the aggregates `scope` names (every cube and listener sketch) with `compute`'s delta, in one
    /// transaction: readers see the old numbers or the new ones, never a mix. Days and artists outside the scope,
    /// offsets and rejected events are not touched.
    ///
    /// `compute` runs inside the transaction, after every row of `kafka_offsets` is locked, and receives what the
    /// database counted and the days to count (`CountedInputs`): what it counts must be exactly the messages below the
    /// stored offsets, judged as they were. Flushes of live consumers wait for the lock, so nothing is counted between
    /// the offsets read and the swap; a flush counted in the zones before an artist's was set here is refused after it
    /// (`ZonesChanged`). An error `compute` throws is rethrown as itself, with nothing changed.
    /// - Returns: the id of the `rebuilds` row written.
    @discardableResult
    public func rebuild(
        _ scope: RebuildScope,
        compute: @Sendable (CountedInputs) async throws -> (delta: InternedDelta, events: Int64)
    ) async throws -> Int64 {
        do {
            return try await swap(scope) { inputs, _ in try await compute(inputs) }
        } catch let error as PostgresTransactionError {
            // Nothing was committed; the computation's own error (an input missing, say) is the one to report.
            if let failure = error.closureError as? ComputeFailure { throw failure.error }
            throw error
        }
    }

    /// `compute`'s error, told apart from the database's.
    struct ComputeFailure: Error {
        var error: any Error
    }

    /// `rebuild`'s transaction; `compute` also gets its connection (to read what it counts again from the database),
    /// and `finish` runs on it once the new rows are written, before the commit. Once it committed, the detail it
    /// wrote as deltas (one an artist-day) is merged into blocks (`compactAllDetail`); should that fail, a serve's
    /// compaction merges them later, and readers sum them meanwhile.
    func swap(
        _ scope: RebuildScope,
        compute: @Sendable (CountedInputs, PostgresConnection) async throws -> (delta: InternedDelta, events: Int64),
        finish: @Sendable (PostgresConnection) async throws -> Void = { _ in }
    ) async throws -> Int64 {
        let id = try await client.withTransaction(logger: logger) { connection in
            var offsets: [TopicPartition: Int64] = [:]
            var hashes: [TopicPartition: String] = [:]
            let rows = try await connection.query(
                "SELECT topic, partition, next_offset, applied_lines_hash FROM kafka_offsets ORDER BY topic, partition FOR UPDATE",
                logger: logger)
            for try await (topic, partition, offset, hash) in rows.decode((String, Int32, Int64, String?).self) {
                offsets[TopicPartition(topic: topic, partition: partition)] = offset
                hashes[TopicPartition(topic: topic, partition: partition)] = hash
            }
            let clocks = try await Self.replayClocks(try await connection.query(Self.replayClocksQuery, logger: logger))
            let days: ClosedRange<Int64>
            // Which rows the swap replaces, by artist and day (`$1`: the first day, `$2`: the artist or the day after).
            let replaced: String, bindings: PostgresBindings
            // The last day the `rebuilds` row names (nil: an artist's days, to today).
            let recordedTo: String?
            // The artist's zone before, as recorded (an artist's scope).
            var former: ZoneRecord?
            switch scope {
            case .days(let interval):
                days = interval
                replaced = "day >= $1::date AND day < $2::date"
                bindings = Self.binds(Self.date(interval.lowerBound), Self.date(interval.upperBound + 1))
                recordedTo = Self.date(interval.upperBound)
            case .artist(let artist, let zone):
                former = try await zoneRecord(of: artist, locking: true, on: connection)
                // No stored day: nothing to delete nor to count (from after the last day PostgreSQL can store).
                let first = (try await earliestStoredDay(of: artist, on: connection) ?? Self.lastDate + 3) - 2
                days = first...Int64.max
                replaced = "day >= $1::date AND artist_id = $2"
                bindings = Self.binds(Self.date(first), artist)
                recordedTo = nil
                try await connection.query(Self.setZoneQuery(zone, of: artist), logger: logger)
                try await connection.query(
                    "UPDATE artist_zones SET counted_in_zone_since = NULL WHERE artist_id = \(artist)", logger: logger)
            }
            var zonesGeneration: Int64 = 0
            for try await generation in try await connection.query(Self.zonesGenerationQuery, logger: logger).decode(Int64.self) {
                zonesGeneration = generation
            }
            var delta: InternedDelta
            let counted: Int64
            do {
                (delta, counted) = try await compute(CountedInputs(
                    offsets: offsets, replayClocks: clocks, appliedLinesHashes: hashes, days: days, zonesGeneration: zonesGeneration,
                    formerZone: former), connection)
            } catch {
                throw ComputeFailure(error: error)
            }
            // Retention drops no month partition while the rows are replaced.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.maintenanceLock))", logger: logger)
            // Days whose hourly detail retention rolled into daily rows: those rows go too, the rebuilt detail takes
            // their place (and is rolled again by the next retention pass); so do the detail's deltas (compaction,
            // which takes the lock shared, merges none meanwhile).
            let tables = AggregateTable.all.compactMap(\.deltas) + AggregateTable.all.map(\.days) + Cube.all.filter(\.isFull).map(\.rolledTable)
            for table in tables {
                try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(replaced)", binds: bindings), logger: logger)
            }
            // An artist's month rows go with its days, from the month of the first day counted (keyed by its first
            // day, which may come before it), and its new days are merged into them; an interval's months are rolled
            // again from their days instead.
            var isArtist = false
            if case .artist(let artist, _) = scope {
                isArtist = true
                for table in AggregateTable.all.compactMap(\.months) {
                    try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE day >= $1::date AND artist_id = $2",
                        binds: Self.binds(Self.date(MonthDays.start(of: Self.storable(days.lowerBound))), artist)), logger: logger)
                }
            }
            delta.addSessions(try await dropSessions(countedIn: scope, days: days, zones: delta.zones, on: connection))
            try await writeAggregates(CombinedDeltas([delta]), mergingMonths: isArtist, on: connection)
            try await announceChanges(to: nil, on: connection)
            // The rolled months the interval touches are rolled again from their days (migration 0020).
            if case .days(let interval) = scope, let rolledTo = try await monthsRolledTo(locking: "FOR SHARE", on: connection) {
                var month = MonthDays.start(of: interval.lowerBound)
                while month <= interval.upperBound && month < rolledTo {
                    try await rollMonth(month, on: connection)
                    month = MonthDays.next(after: month)
                }
            }
            try await finish(connection)
            let inserted = try await connection.query("""
                INSERT INTO rebuilds (from_day, to_day, events)
                VALUES (\(Self.date(days.lowerBound))::date, coalesce(\(recordedTo)::date, greatest(\(Self.date(days.lowerBound))::date, current_date)), \(counted))
                RETURNING id
                """, logger: logger)
            for try await id in inserted.decode(Int64.self) { return id }
            return 0
        }
        _ = try? await compactAllDetail()
        return id
    }

    /// 0001-01-01 and 9999-12-31, in days since 1970: the dates the rebuild writes lie between.
    static let firstDate: Int64 = -719_162, lastDate: Int64 = 2_932_896

    /// `day` within `firstDate...lastDate`.
    static func storable(_ day: Int64) -> Int64 { min(max(day, firstDate), lastDate) }

    /// `day` as a date PostgreSQL reads (`storable`).
    static func date(_ day: Int64) -> String {
        RFC3339.formatDate(CivilDate(daysSinceEpoch: storable(day)))
    }

    /// What the database has counted, for `rebuild` to count again.
    public struct CountedInputs: Sendable {
        /// The stored next offset of every partition: Kafka partitions and plain inputs (`replay:<identity>`).
        public var offsets: [TopicPartition: Int64]
        /// The instant each plain input's lines were judged against (`replayClock(for:now:)`); inputs replayed
        /// before clocks were stored have none.
        public var replayClocks: [TopicPartition: Timestamp]
        /// The hash of the lines applied of each plain input (`AppliedLinesHash`); positions stored before 0012 have
        /// none (their inputs are named by their whole content).
        public var appliedLinesHashes: [TopicPartition: String]
        /// The days to count (each artist's local days): the interval, or an artist's from its earliest stored.
        public var days: ClosedRange<Int64>
        /// The generation of the artists' zones recorded now (`ArtistZones.generation`): what is counted must be
        /// counted in those zones.
        public var zonesGeneration: Int64
        /// An artist's scope: its zone as recorded before (nil: none was, it reported in UTC).
        public var formerZone: ZoneRecord?
    }
}
