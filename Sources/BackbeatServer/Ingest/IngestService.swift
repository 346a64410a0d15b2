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
/// Three long-lived parts with one job each, run as services of one group and sharing this object's state:
/// - `KafkaSource` polls Kafka on a thread of its own and feeds the `IngestLedger` (and the in-memory layers);
/// - `Flusher` writes the ledger's batches every `flushInterval` (sooner once enough is unflushed), with what must
///   not interleave with a flush: the archive, the in-memory layers' upkeep and snapshots;
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
    let ledger: Mutex<IngestLedger>
    /// The archive of every consumed message (nil without `archiveDirectory`); only the flusher touches it.
    let archive = Mutex<ArchiveWriter?>(nil)
    /// The in-memory cubes (nil when memory is disabled: PostgreSQL answers everything).
    let memory: LiveMemory?
    /// Every partition of the subscribed topics, as of the last assignment (nil: unknown).
    let allPartitions = Mutex<Set<TopicPartition>?>(nil)
    let stopPolling = Atomic<Bool>(false)
    /// Ends when the polling thread has exited (nil before it starts).
    let pollingDone = Mutex<Task<Void, Never>?>(nil)
    /// Whether consumption is paused because unflushed work exceeds `pendingLimitBytes`.
    let paused = Atomic<Bool>(false)
    /// `IngestLedger.pendingBytes` as of the last poll or the last batch taken by a flush.
    let pendingBytes = Atomic<Int>(0)
    /// Messages of the owned partitions not yet durable (high watermark less stored offset), as of the last gauges.
    let lag = Atomic<Int64>(0)
    /// Set once `run` made it (nil before, and once closed, leaving the group, by the flusher's last step).
    let consumer = Mutex<KafkaConsumer?>(nil)
    /// Where rejected messages go besides `rejected_events` (nil: nowhere else); set up by the flusher.
    let deadLetters = Mutex<DeadLetterTopic?>(nil)
    let counters = Mutex(IngestCounters())
    /// The artists on partitions the flushes have stored (`artist_partitions`): a flush stores only pairs not in here.
    let storedArtistPartitions = Mutex<Set<ArtistPartition>>([])
    /// The stored changes of other processes last seen (`Store.storedChanges`; nil: not read yet).
    let seenStoredChanges = Mutex<Store.StoredChanges?>(nil)
    /// Whether PostgreSQL answers at the stop: the flush in flight is abandoned and the final one skipped when not.
    let postgresAtStop: PostgresAtStop
    /// The gaps this instance found since it started (`OffsetGap`), the latest last, at most `recentGapLimit`.
    let recentGaps = Mutex<[OffsetGap]>([])

    public init(
        configuration: IngestConfiguration, store: Store, metrics: ServiceMetrics = ServiceMetrics(), logger: Logger,
        postgresAtStop: PostgresAtStop? = nil
    ) {
        self.postgresAtStop = postgresAtStop ?? PostgresAtStop(store: store)
        self.configuration = configuration
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.ledger = Mutex(IngestLedger(archiving: configuration.archiveDirectory != nil))
        self.memory = configuration.memory.isEnabled ? LiveMemory(configuration: configuration.memory) : nil
    }

    /// Runs the three parts until a graceful shutdown (or the failure of one of them). The source polls the consumer
    /// made here; the flusher closes it after the last flush.
    public func run() async throws {
        let consumer = try makeConsumer()
        // Shut down in reverse order: gauges, then the source (polling stops), then the flusher (the last flush).
        let parts = ServiceGroup(configuration: .init(
            services: [.init(service: Flusher(ingest: self, consumer: consumer)), .init(service: KafkaSource(ingest: self, consumer: consumer)),
                       .init(service: IngestGauges(ingest: self))],
            logger: logger))
        try await parts.run()
        logger.info("ingest stopped", metadata: ["accepted": "\(stats.accepted)", "rejected": "\(stats.rejected)"])
    }

    /// Totals since start, for logs and tests.
    public var stats: IngestCounters { counters.withLock { $0 } }

    /// Whether a Kafka broker answers (false before the consumer exists).
    public func isBrokerReachable() async -> Bool {
        guard let consumer = consumer.withLock({ $0 }) else { return false }
        return (try? await awaitBlocking { consumer.isBrokerReachable() }) ?? false
    }

    /// How many of the latest gaps `recentGaps` keeps.
    static let recentGapLimit = 20

    /// The gaps found since the start (the latest last) and those the owned partitions wait at.
    public var offsetGaps: (recent: [OffsetGap], waiting: [OffsetGap]) {
        (recentGaps.withLock { $0 }, ledger.withLock { $0.waitingGaps })
    }

    /// Whether consumption is paused by backpressure, and the unflushed bytes as of the last poll.
    public var backpressure: (paused: Bool, pendingBytes: Int) {
        (paused.load(ordering: .relaxed), pendingBytes.load(ordering: .relaxed))
    }

    /// Applies `change` (assign, revoke, mark stale) to each of `partitions` in the ledger and tells the in-memory
    /// layers, under the ledger's lock: the partitions are no longer loaded, and when the change dropped unflushed
    /// work, the pending cubes become those of the work left.
    func changeOwnership(of partitions: [TopicPartition], _ change: (inout IngestLedger, TopicPartition) -> Void) {
        ledger.withLock { ledger in
            let dropping = ledger.hasUnflushedWork(partitions)
            for partition in partitions { change(&ledger, partition) }
            memory?.ownershipChanged(of: partitions, rebuildingFrom: dropping ? ledger.pendingDeltas : nil)
        }
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

/// Running totals of the ingest path.
public struct IngestCounters: Sendable {
    public var accepted = 0
    public var rejected = 0
    public var flushes = 0
}
