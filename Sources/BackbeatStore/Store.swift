import BackbeatCore
import Logging
import PostgresNIO

/// Backbeat's PostgreSQL store: migrations, the exactly-once flush, stored offsets and aggregate reads.
///
/// Every statement binds its values as parameters; the only identifiers spliced into SQL come from the fixed
/// dataset/dimension/metric allow-lists of the core's query model.
public struct Store: Sendable {
    /// The connection pool; run it as a service (`client.run()`) for as long as the store is used.
    public let client: PostgresClient
    let logger: Logger
    /// Statements the query path has sent (`read`, and each snapshot's BEGIN and COMMIT): what tests count.
    let queryStatements = SharedCount()
    /// Blocks the query path has summed (`rows(for:)`): what tests count.
    let blocksSummed = SharedCount()
    /// The months with month rows, as the last statement that asked saw them.
    let knownMonthRolls = KnownMonthRolls()

    public init(configuration: PostgresClient.Configuration, logger: Logger) {
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Statements the query path has sent so far: its reads, and each read snapshot's BEGIN and COMMIT.
    public var queryStatementCount: Int { queryStatements.value }

    /// Day and month blocks `rows(for:)` has summed so far.
    public var blocksSummedCount: Int { blocksSummed.value }

    /// Checks that the database answers.
    public func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
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

