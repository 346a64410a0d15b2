import BackbeatStore
import ServiceLifecycle
import Synchronization

/// Whether PostgreSQL answers while the service stops, asked once per stop. PostgresClient waits for a connection as
/// long as it is asked to, so a stop whose PostgreSQL refuses connections would wait out `--shutdown-timeout` in each
/// last write; instead the final flush and the removal of the instance's record are skipped when it does not answer
/// within a second. Nothing is lost by skipping: unflushed events are consumed again from the offsets PostgreSQL
/// stored, the record ages out.
public final class PostgresAtStop: Sendable {
    /// How long PostgreSQL has to answer.
    static let limit: Duration = .seconds(1)
    /// The limit of work that has none of its own (heartbeats): only the stop cuts it short.
    static let unbounded: Duration = .seconds(86_400)

    private let store: Store
    private let answer = Mutex<Task<Bool, Never>?>(nil)

    public init(store: Store) {
        self.store = store
    }

    /// Whether PostgreSQL answered: the first caller asks, later ones get the same answer.
    func answers() async -> Bool {
        let task = answer.withLock { answer in
            if let answer { return answer }
            let task = Task { [store] in await succeeds(within: Self.limit) { try await store.ping() } }
            answer = task
            return task
        }
        return await task.value
    }

    /// Runs `work` for at most `limit` (`WaitTimedOut` past it). If the stop begins meanwhile and PostgreSQL does not
    /// answer then, `work` is left (cancelled, not awaited) and `PostgresDoesNotAnswer` thrown: a call waiting for a
    /// connection PostgreSQL refuses, or for an answer on one it no longer serves, must not hold the stop.
    func cancellingIfUnanswered<T: Sendable>(limit: Duration = unbounded, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await awaitTask(limit: limit, work) }
            group.addTask {
                try await gracefulShutdown()
                if await self.answers() { return nil }
                throw PostgresDoesNotAnswer()
            }
            while let result = try await group.next() {
                if let value = result {
                    group.cancelAll()
                    return value
                }
            }
            throw CancellationError()  // not reached: `work` ends with a value or an error
        }
    }
}

/// PostgreSQL did not answer `PostgresAtStop` within its limit.
struct PostgresDoesNotAnswer: Error, CustomStringConvertible {
    var description: String { "PostgreSQL did not answer within \(PostgresAtStop.limit)" }
}
