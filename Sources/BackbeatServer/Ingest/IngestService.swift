import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Consumes the event topics, aggregates in memory and flushes to PostgreSQL exactly once.
///
/// Three long-lived parts with one job each, run as services of one group and sharing the one `IngestState` (changed
/// only through `change`) and the consumer made here:
/// - `KafkaSource` polls Kafka on a thread of its own and feeds the state (and through it the in-memory layers);
/// - `Flusher` writes the state's batches every `flushInterval` (sooner once enough is unflushed), with what must
///   not interleave with a flush: the archive it owns, the in-memory layers' upkeep and snapshots;
/// - `IngestGauges` keeps the gauges of `/metrics` up to date.
///
/// On graceful shutdown they stop in reverse order: the gauges, then the source stops polling, then the flusher
/// writes what was consumed and leaves the group. When a flush hangs, the flusher stops polling itself and fails
/// the group.
public final class IngestService: Service, Sendable {
    let configuration: IngestConfiguration
    let store: Store
    let logger: Logger
    let metrics: ServiceMetrics
    /// The ingest's one state (`IngestState`): the ledger of owned partitions, the in-memory layers, backpressure,
    /// gaps and totals. Changed through `change`.
    let state: SharedIngestState
    /// The in-memory cubes as queries see them (nil when memory is disabled: PostgreSQL answers everything).
    let memory: LiveMemory?
    let stopPolling = Atomic<Bool>(false)
    /// Ends when the polling thread has exited (nil before it starts).
    let pollingDone = Mutex<Task<Void, Never>?>(nil)
    /// Set once `run` made it (nil before, and once closed, leaving the group, by the flusher's last step).
    let consumer = Mutex<KafkaConsumer?>(nil)
    /// The stored changes of other processes last seen (`Store.storedChanges`; nil: not read yet).
    let seenStoredChanges = Mutex<Store.StoredChanges?>(nil)
    /// Whether PostgreSQL answers at the stop: the flush in flight is abandoned and the final one skipped when not.
    let postgresAtStop: PostgresAtStop
    /// When the service was made: the age of the last flush counts from here until one commits.
    let startedAt = IngestService.now()
    /// The artists' reporting zones, as the state counts in them (`loadZones`).
    public let zones: ZoneBook

    public init(
        configuration: IngestConfiguration, store: Store, metrics: ServiceMetrics = ServiceMetrics(), logger: Logger,
        postgresAtStop: PostgresAtStop? = nil
    ) {
        self.postgresAtStop = postgresAtStop ?? PostgresAtStop(store: store)
        self.configuration = configuration
        zones = ZoneBook(database: configuration.zoneDatabase)
        self.store = store
        self.metrics = metrics
        self.logger = logger
        let state = SharedIngestState(IngestState(
            archiving: configuration.archiveDirectory != nil, dedup: configuration.dedup, dedupBudgetBytes: configuration.dedupBudgetBytes,
            pendingLimitBytes: configuration.pendingLimitBytes, memory: configuration.memory.isEnabled))
        self.state = state
        self.memory = configuration.memory.isEnabled ? LiveMemory(configuration: configuration.memory, ingest: state) : nil
    }

    /// Runs the three parts until a graceful shutdown (or the failure of one of them). The source polls the consumer
    /// made here; the flusher closes it after the last flush.
    public func run() async throws {
        do {
            try await readStoredChangesAtStart()
        } catch is CancellationError where Task.isShuttingDownGracefully {
            return  // Stopped before anything was consumed.
        }
        let consumer = try makeConsumer()
        metrics.startCounting(topics: configuration.topics)
        // Shut down in reverse order: gauges, then the source (polling stops), then the flusher (the last flush).
        let parts = ServiceGroup(configuration: .init(
            services: [.init(service: Flusher(ingest: self, consumer: consumer)), .init(service: KafkaSource(ingest: self, consumer: consumer)),
                       .init(service: IngestGauges(ingest: self))],
            logger: logger))
        try await parts.run()
        let totals = state.read { IngestTotals.sum($0.topicTotals.values) }
        logger.info("ingest stopped", metadata: [
            "accepted": "\(totals.accepted)", "rejected": "\(totals.rejected)", "duplicates": "\(totals.duplicates)",
            "beyond_dedup_window": "\(totals.beyondWindow)", "conflicting_event_ids": "\(totals.conflicts)"])
    }

    /// Whether a Kafka broker answers (false before the consumer exists).
    public func isBrokerReachable() async -> Bool {
        guard let consumer = consumer.withLock({ $0 }) else { return false }
        return (try? await awaitBlocking { consumer.isBrokerReachable() }) ?? false
    }

    /// The gaps found since the start (the latest last) and those the owned partitions wait at.
    public var offsetGaps: (recent: [OffsetGap], waiting: [OffsetGap]) {
        state.read { ($0.recentGaps, $0.ledger.waitingGaps) }
    }

    /// Whether consumption is paused by backpressure, and the unflushed bytes as of the last poll.
    public var backpressure: (paused: Bool, pendingBytes: Int) {
        state.read { ($0.paused, $0.pendingBytes) }
    }

    /// Runs `transition` on the state under its lock (`SharedIngestState.change`).
    @discardableResult
    func change<Result>(_ transition: (inout IngestState) -> Result) -> Result {
        state.change(transition)
    }

    /// Stops the polling thread and returns once it has exited (at once if it never started).
    func stopPollingAndWait() async {
        stopPolling.store(true, ordering: .relaxed)
        await pollingDone.withLock { $0 }?.value
    }

    /// The wall clock as a `Timestamp`.
    static func now() -> Timestamp {
        Timestamp.wallClock()
    }

    /// The current UTC day by the wall clock.
    static func today() -> Int64 {
        Timestamp.wallClock().daysSinceEpoch
    }
}

/// A flush did not return within `IngestConfiguration.flushTimeout`: the ingest stopped.
public struct FlushHung: Error, CustomStringConvertible {
    public let limit: Duration

    public var description: String {
        "a flush to PostgreSQL did not return within \(limit) (--flush-timeout): PostgreSQL or the connection to it hangs; a restart resumes from the stored offsets"
    }
}
