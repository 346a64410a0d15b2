import BackbeatCore
import PostgresNIO
import Synchronization

extension Store {
    /// Records `zone` as `artistID`'s and counts its stored days again in it from the quarter-hour detail it kept,
    /// in one transaction (a rebuild of the artist: `swap`): every cube of the artist is made again from its
    /// full-dimension rows moved to the new clock (`ZoneRecount`), and what the detail cannot count is recorded
    /// (`artist_zones`' gap columns, migration 0026) for answers to say so:
    /// - counts before the first day of the new zone that begins inside the detail: the days retention rolled into
    ///   daily rows, those kept by the hour (before `quarter_hour_detail`), those an earlier recount could not count,
    ///   and those counted in an earlier zone still (`counted_in_zone_since`);
    /// - days where a quarter hour the old clock lived twice lands on two of the new clock's days' quarters;
    /// - unique listeners before the day after the change (sketches are per day of the old zone; they are dropped).
    ///
    /// `rules` gives a zone's rules by name (the artist's zone before, and `zone`). Answers `.unchanged` when the
    /// artist has `zone` already.
    public func recountFromDetail(
        _ artistID: String, to zone: ZoneName, now: Timestamp = Timestamp.wallClock(), rules: @escaping @Sendable (String) throws -> ZoneRules
    ) async throws -> ZoneChange {
        let outcome = Mutex<(RecountGaps, Int)?>(nil)
        let rebuild: Int64
        do {
            rebuild = try await swap(.artist(artistID, zone: zone)) { inputs, connection in
                let former = inputs.formerZone?.zone ?? ZoneRules.utc.name
                guard former != zone.text else { throw Unchanged() }
                let old = try rules(former), new = try rules(zone.text)
                let recount = try await detailRecount(of: artistID, from: old, to: new, former: inputs.formerZone, on: connection)
                let delta = recount.delta
                let gaps = RecountGaps(
                    countsFrom: recount.countsFrom,
                    countsMissing: recount.countsMissing.filter { day in recount.countsFrom.map { day >= $0 } ?? true },
                    listenersFrom: new.localDay(ofSecond: now.seconds) + 1)
                outcome.withLock { $0 = (gaps, delta.rowCount) }
                return (delta, Int64(delta.rowCount))
            } finish: { connection in
                guard let (gaps, _) = outcome.withLock({ $0 }) else { return }
                try await connection.query("""
                    UPDATE artist_zones
                    SET counts_from = \(gaps.countsFrom.map(Self.date))::date,
                        counts_missing = \(gaps.countsMissing.sorted().map(Self.date))::date[],
                        listeners_from = \(gaps.listenersFrom.map(Self.date))::date
                    WHERE artist_id = \(artistID)
                    """, logger: logger)
            }
        } catch let error as PostgresTransactionError {
            // Nothing was committed: the computation's own error is the one to report.
            guard let failure = error.closureError as? ComputeFailure else { throw error }
            if failure.error is Unchanged { return .unchanged }
            throw failure.error
        }
        guard let (gaps, rows) = outcome.withLock({ $0 }) else { return .unchanged }
        return .recounted(gaps, rows: rows, rebuild: rebuild)
    }

    /// The artist had the zone asked for already (seen under the lock).
    private struct Unchanged: Error {}

    /// The artist's full-dimension rows moved from `old` to `new`, from the first day of `old` whose counts are all in
    /// the quarter-hour detail.
    private func detailRecount(
        of artistID: String, from old: ZoneRules, to new: ZoneRules, former: ZoneRecord?, on connection: PostgresConnection
    ) async throws -> ZoneRecount {
        let full = Cube.all.filter(\.isFull)
        let earliest = try await earliestStoredDay(of: artistID, on: connection)
        func days(_ sql: String) async throws -> Int64? {
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: Self.binds(artistID)), logger: logger)
            for try await day in rows.decode(Int64?.self) { return day }
            return nil
        }
        // The first (`least` of `min`) or last (`greatest` of `max`) day the artist has in `tables`.
        let each = { (first: Bool, tables: [String]) in
            let inner = tables.map { "(SELECT \(first ? "min" : "max")(day) FROM \($0) WHERE artist_id = $1)" }.joined(separator: ", ")
            return "SELECT (\(first ? "least" : "greatest")(\(inner)) - date '1970-01-01')::bigint"
        }
        let firstDetail = try await days(each(true, full.map { AggregateTable($0).stored }))
        let lastRolled = try await days(each(false, full.map(\.rolledTable)))
        let lastStored = try await days(each(false, AggregateTable.all.map(\.stored)))
        // The first day of the old zone from which every count is in the detail.
        var complete = [former?.gaps.countsFrom, lastRolled.map { $0 + 1 }].compactMap { $0 }.max() ?? .min
        let horizon = try await quarterHourDetailFrom(on: connection)
        if let earliest, earliest < horizon { complete = max(complete, horizon) }
        if let since = former?.countedSince { complete = max(complete, old.localDay(ofSecond: since.seconds) + 1) }
        if let earliest, earliest < (firstDetail ?? Int64.max) { complete = max(complete, firstDetail ?? (lastStored ?? earliest) + 1) }
        let whole = former?.gaps.countsFrom == nil && (earliest.map { $0 >= complete } ?? true)
        var recount = ZoneRecount(
            artistID: artistID, from: old, to: new, completeFromOldDay: whole ? nil : complete,
            missingOldDays: Array(former?.gaps.countsMissing ?? []))
        for cube in full {
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT (day - date '1970-01-01')::bigint, block FROM \(AggregateTable(cube).stored)
                WHERE artist_id = $1 AND day >= $2::date ORDER BY day
                """, binds: Self.binds(artistID, Self.date(whole ? Self.firstDate : complete))), logger: logger)
            for try await (day, block) in rows.decode((Int64, ByteBuffer).self) {
                recount.add(try CubeBlock.decode(Array(block.readableBytesView), of: cube), ofDay: day, in: cube)
            }
        }
        return recount
    }
}
