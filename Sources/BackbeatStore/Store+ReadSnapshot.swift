import PostgresNIO

extension Store {
    /// The connection whose transaction the current task's reads join (see `withReadSnapshot`); nil: the pool.
    @TaskLocal static var snapshotConnection: PostgresConnection?

    /// Runs `body` so that every read it makes through this store (child tasks included) sees one snapshot of the
    /// database: one connection in a read-only repeatable-read transaction. An answer built from several reads
    /// then never mixes the numbers from before and after a commit that changed them (a `rebuild`'s swap).
    public func withReadSnapshot<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if Self.snapshotConnection != nil { return try await body() }
        return try await client.withConnection { connection in
            queryStatements.add(2)
            _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let result = try await Self.$snapshotConnection.withValue(connection) { try await body() }
                _ = try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Runs a read on the current snapshot's connection, or on the pool.
    func read(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        queryStatements.add()
        if let connection = Self.snapshotConnection {
            return try await connection.query(query, logger: logger)
        }
        return try await client.query(query, logger: logger)
    }
}
