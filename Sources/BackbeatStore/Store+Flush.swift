import BackbeatCore
import PostgresNIO

extension Store {
    /// Writes a flush batch in one transaction: first the offset moves (each only if the stored offset is still
    /// the one this consumer started from), then the delta's rows appended to every cube's `_delta` table
    /// (the full hourly tables included) and the listener sketches', then the rejected messages. Either all of it commits or none of it does.
    ///
    /// - Throws: `OffsetConflict` when another consumer has stored a different offset for one of the partitions.
    /// `merged` is `batch.mergedDelta` when the caller has it already; `archive` are the archive segments' lengths
    /// after this batch (`serve --archive-dir`).
    public func write(_ batch: FlushBatch, merged: RollupDelta? = nil, archive: [ArchiveSegmentPosition] = []) async throws {
        let delta = merged ?? batch.mergedDelta
        do {
            try await client.withTransaction(logger: logger) { connection in
                for part in batch.parts {
                    try await moveOffset(part, on: connection)
                }
                for cube in Cube.all {
                    try await writeCube(cube, delta.rows(for: cube), on: connection)
                }
                try await writeListeners(delta, on: connection)
                try await writeRejected(delta.rejected, on: connection)
                for segment in archive {
                    try await recordSegment(segment, on: connection)
                }
            }
        } catch let error as PostgresTransactionError {
            // Nothing was committed; surface a conflict as itself so the caller can re-seek.
            if let conflict = error.closureError as? OffsetConflict { throw conflict }
            throw error
        }
    }

    private func moveOffset(_ part: FlushBatch.Part, on connection: PostgresConnection) async throws {
        let topic = part.topicPartition.topic
        let partition = part.topicPartition.partition
        let rows: PostgresRowSequence
        if let expected = part.expectedOffset {
            rows = try await connection.query("""
                UPDATE kafka_offsets SET next_offset = \(part.newOffset), updated_at = now()
                WHERE topic = \(topic) AND partition = \(partition) AND next_offset = \(expected)
                RETURNING 1
                """, logger: logger)
        } else {
            rows = try await connection.query("""
                INSERT INTO kafka_offsets (topic, partition, next_offset) VALUES (\(topic), \(partition), \(part.newOffset))
                ON CONFLICT (topic, partition) DO NOTHING
                RETURNING 1
                """, logger: logger)
        }
        var moved = false
        for try await _ in rows { moved = true }
        guard moved else { throw OffsetConflict(topicPartition: part.topicPartition, expected: part.expectedOffset) }
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
        var copy = CopyTextEncoder()
        for message in rejected {
            copy.text(message.position.topicPartition.topic)
            copy.integer(message.position.topicPartition.partition)
            copy.integer(message.position.offset)
            copy.bytes(message.key)
            copy.bytes(message.storedValue)
            copy.text(message.rejection.reason.rawValue)
            copy.text(message.rejection.detail)
            copy.endRow()
        }
        let data = copy.buffer
        try await connection.copyFrom(
            table: "rejected_events", columns: ["topic", "partition", "offset", "key", "value", "reason", "detail"],
            logger: logger
        ) { writer in
            try await writer.write(data)
        }
    }

    /// Appends a cube's rows to its `_delta` table (`AggregateTable`): COPY alone, no key to check.
    func writeCube(_ cube: Cube, _ rows: [CubeRowKey: CubeRowSums], on connection: PostgresConnection) async throws {
        guard !rows.isEmpty else { return }
        var copy = CopyTextEncoder()
        for (key, sums) in rows {
            copy.text(key.artistID)
            if cube.grain == .hour { copy.hour(HourBucket(hoursSinceEpoch: key.bucket)) } else { copy.day(key.bucket) }
            for index in cube.dimensions.indices { copy.text(key.dimension(index)) }
            switch cube.dataset {
            case .streams:
                copy.integer(sums.integers.0)
                copy.integer(sums.integers.1)
                copy.integer(sums.integers.2)
            case .revenue:
                copy.plain(sums.amount.decimalString)
                copy.integer(sums.integers.0)
            case .social:
                copy.integer(sums.integers.0)
            }
            copy.endRow()
        }
        try await append(copy.buffer, to: AggregateTable(cube), on: connection)
    }

    /// Appends the delta's listener sketches to the `_delta` tables of the listener aggregates.
    func writeListeners(_ delta: RollupDelta, on connection: PostgresConnection) async throws {
        if !delta.artistListeners.isEmpty {
            var copy = CopyTextEncoder()
            for (key, sketch) in delta.artistListeners {
                copy.text(key.artistID)
                copy.day(key.day)
                copy.bytes(sketch.serialized())
                copy.endRow()
            }
            try await append(copy.buffer, to: .artistListeners, on: connection)
        }
        if !delta.trackListeners.isEmpty {
            var copy = CopyTextEncoder()
            for (key, sketch) in delta.trackListeners {
                copy.text(key.artistID)
                copy.day(key.day)
                copy.text(key.trackID)
                copy.bytes(sketch.serialized())
                copy.endRow()
            }
            try await append(copy.buffer, to: .trackListeners, on: connection)
        }
    }

    private func append(_ data: ByteBuffer, to table: AggregateTable, on connection: PostgresConnection) async throws {
        try await connection.copyFrom(table: table.delta, columns: table.columns, logger: logger) { writer in
            try await writer.write(data)
        }
    }
}
