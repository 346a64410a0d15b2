import PostgresNIO

extension Store {
    /// The connection whose transaction the current task's reads join (see `withReadSnapshot`); nil: the pool.
    @TaskLocal static var snapshotConnection: PostgresConnection?

    /// Runs `body` so that every read it makes through this store (child tasks included) sees one snapshot of the
    /// database: one connection in a read-only repeatable-read transaction. An answer built from several reads
    /// then never mixes the numbers from before and after a commit that changed them (a `rebuild`'s swap).
    ///
    /// BEGIN and COMMIT are sent without waiting for their answers: a connection runs what it is sent in order, so
    /// the body's first statement runs inside the transaction and whatever the pool sends next runs after the COMMIT.
    /// Under load each wait for an answer is a wait for a thread to run (2-5 ms each, measured), so a snapshot costs
    /// its reads' round trips alone. BEGIN's answer is checked before the answer is returned: reads that ran
    /// outside a transaction are never answered.
    public func withReadSnapshot<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if Self.snapshotConnection != nil { return try await body() }
        return try await readClient.withConnection { connection in
            queryStatements.add(2)
            let begun: EventLoopFuture<PostgresQueryResult> = connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let result = try await Self.$snapshotConnection.withValue(connection) { try await body() }
                _ = try await begun.get()
                let committed: EventLoopFuture<PostgresQueryResult> = connection.query("COMMIT", logger: logger)
                committed.whenFailure { [logger] error in
                    // Read only: nothing is lost; the connection's next user sees what broke it.
                    logger.debug("a read snapshot's COMMIT failed", metadata: ["error": "\(String(reflecting: error))"])
                }
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Runs a read on the current snapshot's connection, or on the read pool: prepared by its text
    /// (`PreparedReads`), or unnamed once every number is taken.
    func read(_ query: PostgresQuery) async throws -> ReadRows {
        queryStatements.add()
        let connection = Self.snapshotConnection
        switch PreparedReads.shared.sending(query.sql) {
        case .named(let statement):
            return try await statement.run(query.binds, on: connection, else: readClient, logger: logger)
        case .unnamed(let first):
            if first {
                logger.warning("the query path sends more statement texts than it keeps prepared: the others are planned each time they run",
                               metadata: ["prepared": "\(PreparedReads.shared.capacity)"])
            }
            if let connection {
                return try await connection.query(query, logger: logger).map { row throws in row }
            }
            return try await readClient.query(query, logger: logger).map { row throws in row }
        }
    }

    /// The rows of a read, undecoded.
    typealias ReadRows = AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow>
}
