import BackbeatCore
import PostgresNIO

extension Store {
    /// The advisory lock rebuild and retention take, so that one never drops or swaps what the other is changing
    /// (the value compaction's lock had before migration 0018: migrations 0014-0018 take it too).
    public static let maintenanceLock: Int64 = 0x6261_636B_6265_6174  // "backbeat"

    /// Replaces the aggregates of the UTC days `fromDay...toDay` (every cube and listener sketch) with `compute`'s
    /// delta, in one transaction: readers see the old numbers or the new ones, never a mix. Days outside the interval,
    /// offsets and rejected events are not touched.
    ///
    /// `compute` runs inside the transaction, after every row of `kafka_offsets` is locked, and receives what the
    /// database counted (`CountedInputs`): what it counts must be exactly the messages below the stored offsets,
    /// judged as they were. Flushes of live consumers wait for the lock, so nothing is counted between the offsets
    /// read and the swap. An error `compute` throws is rethrown as itself, with nothing changed.
    /// - Returns: the id of the `rebuilds` row written.
    @discardableResult
    public func rebuild(
        fromDay: Int64, toDay: Int64,
        compute: @Sendable (CountedInputs) async throws -> (delta: InternedDelta, events: Int64)
    ) async throws -> Int64 {
        do {
            return try await swap(fromDay: fromDay, toDay: toDay, compute: compute)
        } catch let error as PostgresTransactionError {
            // Nothing was committed; the computation's own error (an input missing, say) is the one to report.
            if let failure = error.closureError as? ComputeFailure { throw failure.error }
            throw error
        }
    }

    /// `compute`'s error, told apart from the database's.
    private struct ComputeFailure: Error {
        var error: any Error
    }

    private func swap(
        fromDay: Int64, toDay: Int64,
        compute: @Sendable (CountedInputs) async throws -> (delta: InternedDelta, events: Int64)
    ) async throws -> Int64 {
        let from = RFC3339.formatDate(CivilDate(daysSinceEpoch: fromDay))
        let end = RFC3339.formatDate(CivilDate(daysSinceEpoch: toDay + 1))
        return try await client.withTransaction(logger: logger) { connection in
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
            let (delta, counted): (InternedDelta, Int64)
            do {
                (delta, counted) = try await compute(CountedInputs(offsets: offsets, replayClocks: clocks, appliedLinesHashes: hashes))
            } catch {
                throw ComputeFailure(error: error)
            }
            // Retention drops no month partition while the interval is replaced.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.maintenanceLock))", logger: logger)
            for table in AggregateTable.all {
                try await connection.query(PostgresQuery(unsafeSQL:
                    "DELETE FROM \(table.days) WHERE day >= $1::date AND day < $2::date",
                    binds: Self.binds(from, end)), logger: logger)
            }
            // Days whose hourly detail retention rolled into daily rows: those rows go too, the rebuilt detail
            // takes their place (and is rolled again by the next retention pass).
            for cube in Cube.all where cube.isFull {
                try await connection.query(PostgresQuery(unsafeSQL:
                    "DELETE FROM \(cube.rolledTable) WHERE day >= $1::date AND day < $2::date",
                    binds: Self.binds(from, end)), logger: logger)
            }
            try await writeAggregates(CombinedDeltas([delta]), mergingMonths: false, on: connection)
            try await announceChanges(to: nil, on: connection)
            // The rolled months the interval touches are rolled again from their days (migration 0020).
            if let rolledTo = try await monthsRolledTo(locking: "FOR SHARE", on: connection) {
                var month = MonthDays.start(of: fromDay)
                while month <= toDay && month < rolledTo {
                    try await rollMonth(month, on: connection)
                    month = MonthDays.next(after: month)
                }
            }
            let inserted = try await connection.query("""
                INSERT INTO rebuilds (from_day, to_day, events) VALUES (\(from)::date, (\(end)::date - 1), \(counted)) RETURNING id
                """, logger: logger)
            for try await id in inserted.decode(Int64.self) { return id }
            return 0
        }
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
    }

    private static func binds(_ values: String...) -> PostgresBindings {
        var bindings = PostgresBindings()
        for value in values { bindings.append(value) }
        return bindings
    }
}
