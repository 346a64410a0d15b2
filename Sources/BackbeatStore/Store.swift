import BackbeatCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Backbeat's PostgreSQL store: migrations, the exactly-once flush, stored offsets and aggregate reads.
///
/// Every statement binds its values as parameters; the only identifiers spliced into SQL come from the fixed
/// dataset/dimension/metric allow-lists of the core's query model.
public struct Store: Sendable, Service {
    /// The connection pool of everything but the query path; run the store as a service (`run()`) for as long as it
    /// is used.
    public let client: PostgresClient
    /// The query path's pool (`read`, `withReadSnapshot`): its connections keep the query path's statements prepared
    /// (`PreparedReads`), so that a miss of the answer cache costs PostgreSQL no planning.
    let readClient: PostgresClient
    /// Where the store connects, for the connections it opens apart from the pool.
    private let url: PostgresURL
    let logger: Logger
    /// Statements the query path has sent (`read`, and each snapshot's BEGIN and COMMIT): what tests count.
    let queryStatements = SharedCount()
    /// Blocks the query path has summed (`rows(for:)`): what tests count.
    let blocksSummed = SharedCount()
    /// The months with month rows, as the last statement that asked saw them.
    let knownMonthRolls = KnownMonthRolls()

    public init(url: PostgresURL, logger: Logger) {
        self.client = PostgresClient(configuration: url.clientConfiguration, backgroundLogger: logger)
        self.readClient = PostgresClient(configuration: url.readClientConfiguration, backgroundLogger: logger)
        self.url = url
        self.logger = logger
    }

    /// Runs the store's two pools until the task is cancelled or a graceful shutdown is asked.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            group.addTask { await readClient.run() }
        }
    }

    /// Runs `body` on a connection of its own, outside the pool, closed when `body` returns or throws: for work that
    /// holds a connection for long (listening), so that losing it can never hand a broken connection to the pool.
    public func withDedicatedConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await PostgresConnection.connect(
            configuration: try url.connectionConfiguration(), id: Self.dedicatedConnectionIDs.wrappingAdd(1, ordering: .relaxed).newValue, logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Numbers for the dedicated connections in the logs, apart from the pool's (which count from 0).
    private static let dedicatedConnectionIDs = Atomic<Int>(1_000_000)

    /// Statements the query path has sent so far: its reads, and each read snapshot's BEGIN and COMMIT.
    public var queryStatementCount: Int { queryStatements.value }

    /// Day and month blocks `rows(for:)` has summed so far.
    public var blocksSummedCount: Int { blocksSummed.value }

    /// Checks that the database answers.
    public func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
    }

    /// Text values bound as a statement's parameters, in order (`$1`, `$2`, ...).
    static func binds(_ values: String...) -> PostgresBindings {
        var bindings = PostgresBindings()
        for value in values { bindings.append(value) }
        return bindings
    }
}

/// Raised by a flush when another consumer has moved a partition's stored offset since we read it:
/// the transaction is rolled back and the partition must be consumed again from the stored offset.
public struct OffsetConflict: Error, Sendable, CustomStringConvertible {
    public var topicPartition: TopicPartition
    public var expected: Int64?

    public var description: String {
        "the stored offset of \(topicPartition) is no longer \(expected.map(String.init) ?? "absent"); another consumer flushed it"
    }
}
