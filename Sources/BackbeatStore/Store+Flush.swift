import BackbeatCore
import Dispatch
import PostgresNIO

extension Store {
    /// Writes a flush batch in one transaction: first the offset moves (each only if the stored offset is still
    /// the one this consumer started from), the check that the artists' zones are still those the batch was counted
    /// in (`checkZones`: a zone set since waited for these offsets' locks, or this write waited for its), the ids the dedup windows remembered (`recordDedupIDs`), then the rows
    /// its parts' deltas add, merged into the artist-days of the cubes and of the listener sketches
    /// (`writeAggregates`), then the rejected messages, then the archive segments' lengths after this batch
    /// (`serve --archive-dir`). Either all of it commits or none of it does.
    ///
    /// `artistPartitions` are the batch's artists on their partitions not stored before (`serve` routes queries by
    /// them). Answers what the batch changed in the page funnel (`mergeSessions`), for the in-memory cubes.
    ///
    /// - Throws: `OffsetConflict` when another consumer has stored a different offset for one of the partitions;
    ///   `ZonesChanged` when an artist's zone was set since the batch's zones were read.
    @discardableResult
    public func write(
        _ batch: FlushBatch, archive: [ArchiveSegmentPosition] = [], artistPartitions: [ArtistPartition] = []
    ) async throws -> InternedDelta? {
        let combined = batch.combinedDeltas
        do {
            return try await client.withTransaction(logger: logger) { connection in
                for part in batch.parts {
                    try await moveOffset(part, on: connection)
                    try await recordGaps(part.gaps, on: connection)
                }
                try await checkZones(countedAt: batch.zonesGeneration, on: connection)
                try await recordDedupIDs(batch.parts, on: connection)
                let funnel = try await writeAggregates(combined, on: connection)
                try await writeRejected(batch.rejected, on: connection)
                for segment in archive {
                    try await recordSegment(segment, on: connection)
                }
                try await recordArtistPartitions(artistPartitions, on: connection)
                return funnel
            }
        } catch let error as PostgresTransactionError {
            // Nothing was committed; surface a conflict as itself so the caller can re-seek.
            if let conflict = error.closureError as? OffsetConflict { throw conflict }
            if let changed = error.closureError as? ZonesChanged { throw changed }
            throw error
        }
    }

    private func moveOffset(_ part: FlushBatch.Part, on connection: PostgresConnection) async throws {
        let topic = part.topicPartition.topic
        let partition = part.topicPartition.partition
        let rows: PostgresRowSequence
        if let expected = part.expectedOffset {
            rows = try await connection.query("""
                UPDATE kafka_offsets
                SET next_offset = \(part.newOffset), applied_lines_hash = \(part.appliedLinesHash), updated_at = now()
                WHERE topic = \(topic) AND partition = \(partition) AND next_offset = \(expected)
                RETURNING 1
                """, logger: logger)
        } else {
            rows = try await connection.query("""
                INSERT INTO kafka_offsets (topic, partition, next_offset, applied_lines_hash)
                VALUES (\(topic), \(partition), \(part.newOffset), \(part.appliedLinesHash))
                ON CONFLICT (topic, partition) DO NOTHING
                RETURNING 1
                """, logger: logger)
        }
        var moved = false
        for try await _ in rows { moved = true }
        guard moved else { throw OffsetConflict(topicPartition: part.topicPartition, expected: part.expectedOffset) }
    }

    private func recordArtistPartitions(_ pairs: [ArtistPartition], on connection: PostgresConnection) async throws {
        guard !pairs.isEmpty else { return }
        try await connection.query("""
            INSERT INTO artist_partitions (artist_id, topic, partition)
            SELECT * FROM unnest(\(pairs.map(\.artistID))::text[], \(pairs.map(\.topicPartition.topic))::text[],
                                 \(pairs.map(\.topicPartition.partition))::integer[])
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    private func recordSegment(_ segment: ArchiveSegmentPosition, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO archive_segments (name, topic, partition, from_offset, next_offset, bytes)
            VALUES (\(segment.name), \(segment.topicPartition.topic), \(segment.topicPartition.partition), \(segment.fromOffset),
                    \(segment.nextOffset), \(segment.bytes))
            ON CONFLICT (name) DO UPDATE SET next_offset = excluded.next_offset, bytes = excluded.bytes, updated_at = now()
            """, logger: logger)
    }

    /// The stored length of each named archive segment that has one.
    public func archiveSegmentLengths(_ names: [String]) async throws -> [String: Int64] {
        guard !names.isEmpty else { return [:] }
        var lengths: [String: Int64] = [:]
        let rows = try await client.query("SELECT name, bytes FROM archive_segments WHERE name = ANY(\(names))", logger: logger)
        for try await (name, bytes) in rows.decode((String, Int64).self) { lengths[name] = bytes }
        return lengths
    }

    private func writeRejected(_ rejected: [RejectedMessage], on connection: PostgresConnection) async throws {
        guard !rejected.isEmpty else { return }
        var copy = CopyBinaryEncoder(first: true)
        for message in rejected {
            copy.text(message.position.topicPartition.topic)
            copy.int32(message.position.topicPartition.partition)
            copy.int64(message.position.offset)
            copy.bytes(message.key)
            copy.bytes(message.storedValue)
            copy.text(message.rejection.reason.rawValue)
            copy.text(message.rejection.detail)
            copy.endRow()
        }
        copy.finish()
        let data = copy.buffer
        try await connection.copyBinary(
            table: "rejected_events", columns: ["topic", "partition", "offset", "key", "value", "reason", "detail"],
            logger: logger
        ) { writer in
            try await writer.write(data)
        }
    }

    /// Writes the rows `deltas` add (`AggregateTable`): merges every dashboard cube's rows into its `_days` table and
    /// appends the full-dimension tables' to their deltas (`mergeDays`), then appends its sketches to theirs
    /// (`appendSketches`; compaction merges both later, migration 0032); rows of a month already
    /// rolled (migration 0020) are merged into its month rows too, unless `mergingMonths` is false (a rebuild rolls
    /// its months again instead). A key written by two flushes answers once. Every writer (a flush, a replay's batch,
    /// a rebuild) comes here with its deltas alone: each aggregate is made from them in one place.
    ///
    /// `month_rolls`' row is held shared until the transaction ends, so that no month is rolled meanwhile.
    @discardableResult
    func writeAggregates(_ deltas: CombinedDeltas, mergingMonths: Bool = true, on connection: PostgresConnection) async throws -> InternedDelta? {
        let funnel = try await mergeSessions(deltas, on: connection)
        let deltas = funnel.map { deltas.adding($0) } ?? deltas
        let rolledTo = mergingMonths ? try await monthsRolledTo(locking: "FOR SHARE", on: connection) : nil
        // The cubes' blocks (each cube's in turn) and the listener sketches (a sort of the deltas' plays) are made on
        // dispatch threads while PostgreSQL writes the ones made before: made in tasks, they would hold the
        // concurrency pool's threads (two on two cores) and keep this task from sending what is ready.
        // One cube's blocks are made ahead of the one being written, no more: a flush holds two cubes' at most.
        let values = deltas.values
        async let listeners = computed { deltas.listeners() }
        async let visitors = computed { deltas.visitors() }
        let rows = await computed { deltas.artistDayRows() }
        let blocks = { (cube: Cube) in Task { await computed { StagedBlock.blocks(rows, of: cube, values: values) } } }
        var next = blocks(Cube.all[0])
        var written = ArtistDays()
        for (index, cube) in Cube.all.enumerated() {
            let made = await next.value
            if index + 1 < Cube.all.count { next = blocks(Cube.all[index + 1]) }
            try await mergeDays(cube, made, on: connection)
            try await mergeMonths(made, of: cube, rolledTo: rolledTo, on: connection)
            if cube.isFull { for block in made { written.insert(block.artistID, ArtistVersions.Families(cube.dataset), days: block.day...block.day) } }
        }
        if !written.isEmpty { try await announceChanges(to: written, on: connection) }
        for (family, sketches) in [(SketchFamily.listeners, await listeners), (.visitors, await visitors)] where !sketches.artists.isEmpty {
            let artists = sketches.artists.map { ArtistListenersDay(artistID: values[$0.key.artist], day: $0.key.day, sketch: $0.value) }
            let keyed = TrackListenersDay.days(of: sketches.tracks, values: values)
            try await appendSketches(family, artists: artists, tracks: keyed, on: connection)
            try await mergeMonths(family, artists: artists, tracks: keyed, rolledTo: rolledTo, on: connection)
        }
        return funnel
    }

    /// COPYs `rows` into `table` (`append`) under a savepoint; answers false, with none of them written, when one of
    /// them has a key another writer stored meanwhile (a unique violation, raised once that writer commits). Rows
    /// are sent in the order given: writers that order them alike never deadlock one another.
    func appendUnlessStored<Rows: Collection>(
        _ rows: Rows, to table: String, columns: [String], on connection: PostgresConnection,
        _ encode: (Rows.Element, inout CopyBinaryEncoder) -> Void
    ) async throws -> Bool {
        try await connection.query("SAVEPOINT backbeat_new_rows", logger: logger)
        do {
            try await append(rows, to: table, columns: columns, on: connection, encode)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            try await connection.query("ROLLBACK TO SAVEPOINT backbeat_new_rows", logger: logger)
            return false
        }
        try await connection.query("RELEASE SAVEPOINT backbeat_new_rows", logger: logger)
        return true
    }

    /// COPYs `rows` into `table`'s `columns`, each encoded by `encode`, in chunks of about
    /// `CopyBinaryEncoder.chunkBytes` (a chunk is encoded without suspending, then sent).
    func append<Rows: Sequence>(
        _ rows: Rows, to table: String, columns: [String], on connection: PostgresConnection,
        _ encode: (Rows.Element, inout CopyBinaryEncoder) -> Void
    ) async throws {
        try await connection.copyBinary(table: table, columns: columns, logger: logger) { writer in
            var iterator = rows.makeIterator()
            var exhausted = false
            var first = true
            while !exhausted {
                var copy = CopyBinaryEncoder(first: first)
                first = false
                exhausted = copy.encode(&iterator, upTo: CopyBinaryEncoder.chunkBytes, encode)
                try await writer.write(copy.buffer)
            }
        }
    }
}

/// `work`'s result, computed on a dispatch thread (not one of the concurrency pool's).
func computed<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
