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
/// A dedicated thread polls Kafka and feeds the `IngestLedger`; an async loop flushes the ledger's batches
/// every `flushInterval`. On graceful shutdown: stop polling, flush what was consumed, then leave the group.
public final class IngestService: Service, Sendable {
    let configuration: IngestConfiguration
    let store: Store
    let logger: Logger
    let metrics: ServiceMetrics
    let ledger: Mutex<IngestLedger>
    /// The archive of every consumed message (nil without `archiveDirectory`); only the flush loop touches it.
    private let archive = Mutex<ArchiveWriter?>(nil)
    /// The in-memory cubes (nil when memory is disabled: PostgreSQL answers everything).
    let memory: LiveMemory?
    /// Every partition of the subscribed topics, as of the last assignment (nil: unknown).
    fileprivate let allPartitions = Mutex<Set<TopicPartition>?>(nil)
    private let stopPolling = Atomic<Bool>(false)
    /// Whether consumption is paused because unflushed work exceeds `pendingLimitBytes`.
    private let paused = Atomic<Bool>(false)
    /// `IngestLedger.pendingBytes` as of the last poll or the last batch taken by a flush.
    private let pendingBytes = Atomic<Int>(0)
    /// Messages of the owned partitions not yet durable (high watermark less stored offset), as of the last flush.
    private let lag = Atomic<Int64>(0)
    fileprivate let consumer = Mutex<KafkaConsumer?>(nil)
    /// Where rejected messages go besides `rejected_events` (nil: nowhere else); set up by `run`.
    private let deadLetters = Mutex<DeadLetterTopic?>(nil)
    private let counters = Mutex(IngestCounters())
    /// The latest `backbeat rebuild` seen (nil: not read yet).
    private let seenRebuild = Mutex<Int64?>(nil)

    public init(configuration: IngestConfiguration, store: Store, metrics: ServiceMetrics = ServiceMetrics(), logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.ledger = Mutex(IngestLedger(archiving: configuration.archiveDirectory != nil))
        self.memory = configuration.memory.isEnabled ? LiveMemory(configuration: configuration.memory) : nil
    }

    /// Totals since start, for logs and tests.
    public var stats: IngestCounters { counters.withLock { $0 } }

    /// How many messages not yet durable make the ingest count as catching up.
    static let catchUpLag: Int64 = 100_000

    /// Whether more than `catchUpLag` messages of the owned partitions wait to be made durable: a backlog after a stop
    /// or an outage, or producers faster than the ingest. Compaction yields to it for a while (`CompactionService`).
    public var isCatchingUp: Bool { lag.load(ordering: .relaxed) > Self.catchUpLag }

    /// Whether a Kafka broker answers (false before the consumer exists).
    public func isBrokerReachable() async -> Bool {
        guard let consumer = consumer.withLock({ $0 }) else { return false }
        return (try? await awaitBlocking { consumer.isBrokerReachable() }) ?? false
    }

    public func run() async throws {
        try await openArchive()
        if let topic = configuration.deadLetterTopic {
            let producer = try DeadLetterTopic(brokers: configuration.brokers, topic: topic, extra: configuration.kafka, logger: logger)
            deadLetters.withLock { $0 = producer }
            logger.info("sending rejected messages to the dead-letter topic", metadata: ["topic": "\(topic)"])
        }
        let consumer = try KafkaConsumer(
            brokers: configuration.brokers, groupID: configuration.groupID, topics: configuration.topics,
            extra: configuration.consumerProperties, logger: logger,
            onAssign: { [self] partitions in assigned(partitions) },
            onRevoke: { [self] partitions in revoked(partitions) })
        self.consumer.withLock { $0 = consumer }
        logger.info("consuming", metadata: ["brokers": "\(configuration.brokers)", "topics": "\(configuration.topics.joined(separator: ","))", "group": "\(configuration.groupID)"])

        let pollingDone = startPollingThread(consumer)
        let hung = await withGracefulShutdownHandler { () -> Bool in
            var failures = 0
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    if failures == 0 {
                        try await sleepUntilFlushIsDue()
                    } else {
                        // After failed flushes, back off: twice the interval per failure, at most 10 s.
                        try await Task.sleep(for: min(configuration.flushInterval * (1 << min(failures, 6)), .seconds(10)))
                    }
                } catch {
                    break
                }
                let outcome = await flushOnce(consumer: consumer)
                if outcome == .hung { return true }
                failures = outcome == .failed ? failures + 1 : 0
                sealArchiveSegments()
                recordGauges(consumer)
                await noticeRebuilds()
                await loadSnapshotIfOwningEverything()
                memory?.maintain(today: Self.today())
            }
            return false
        } onGracefulShutdown: { [self] in
            stopPolling.store(true, ordering: .relaxed)
        }
        stopPolling.store(true, ordering: .relaxed)
        await pollingDone.value
        if hung { try await stopAfterHungFlush(consumer) }
        // Final flush: retry for a while so that a clean stop leaves nothing to consume again.
        for attempt in 1...10 {
            let outcome = await flushOnce(consumer: consumer)
            if outcome == .hung { try await stopAfterHungFlush(consumer) }
            guard outcome == .failed else { break }
            logger.warning("final flush failed; retrying", metadata: ["attempt": "\(attempt)"])
            try? await Task.sleep(for: .milliseconds(500))
        }
        if await settleArchive() {
            try archive.withLock { try $0?.closeAll() }
        } else {
            logger.warning("archive: segments left open; the next start repairs them from the lengths PostgreSQL stored")
        }
        // Leaving the group waits for the broker; with the broker gone it may never return.
        do {
            try await awaitBlocking(limit: Self.leaveGroupLimit) { consumer.close() }
        } catch {
            logger.warning("could not leave the consumer group in time (is the broker reachable?); the group moves the partitions on after session.timeout.ms",
                           metadata: ["error": "\(error)"])
        }
        self.consumer.withLock { $0 = nil }
        logger.info("ingest stopped", metadata: ["accepted": "\(stats.accepted)", "rejected": "\(stats.rejected)"])
    }

    /// Returns when a flush is due: `flushInterval` after the last one ended, or sooner once unflushed work (as of
    /// the last poll or batch taken) reaches `IngestConfiguration.earlyFlushBytes`.
    private func sleepUntilFlushIsDue() async throws {
        let due = ContinuousClock.now + configuration.flushInterval
        while ContinuousClock.now < due, pendingBytes.load(ordering: .relaxed) < configuration.earlyFlushBytes {
            try await Task.sleep(for: min(.milliseconds(50), due - ContinuousClock.now))
        }
    }

    /// Ends the ingest after a flush hung (polling has stopped): the consumer leaves its group (bounded), but nothing
    /// more is written, settled or sealed (PostgreSQL does not answer, and the hung transaction may yet commit):
    /// the next start repairs the archive and consumes again from the stored offsets.
    private func stopAfterHungFlush(_ consumer: KafkaConsumer) async throws -> Never {
        _ = try? await awaitBlocking(limit: Self.leaveGroupLimit) { consumer.close() }
        self.consumer.withLock { $0 = nil }
        throw FlushHung(limit: configuration.flushTimeout)
    }

    // MARK: - Polling thread

    /// How long the polling thread waits for PostgreSQL (stored offsets, inside a rebalance callback) before it
    /// treats the read as failed: the partitions are then marked stale and sought again on a later poll.
    static let storeWaitLimit: Duration = .seconds(10)
    /// How long a stop waits for the consumer to leave its group.
    static let leaveGroupLimit: Duration = .seconds(10)

    /// Starts the OS thread that polls; the returned task finishes when it exits.
    private func startPollingThread(_ consumer: KafkaConsumer) -> Task<Void, Never> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let thread = Thread { [self] in
            pollLoop(consumer)
            continuation.finish()
        }
        thread.name = "backbeat-kafka-poll"
        thread.start()
        return Task { for await _ in stream {} }
    }

    private func pollLoop(_ consumer: KafkaConsumer) {
        while !stopPolling.load(ordering: .relaxed) {
            reseekStalePartitions(consumer)
            applyBackpressure(consumer)
            let messages = consumer.poll(timeoutMs: 100, maxMessages: configuration.pollBatchSize)
            guard !messages.isEmpty else { continue }
            let now = Timestamp.wallClock()
            var tally = ServiceMetrics.PollTally()
            ledger.withLock { ledger in
                // The in-memory layer takes what this poll added, interned apart from the partitions' deltas.
                var consumed = InternedDelta()
                let keep = memory != nil
                for message in messages {
                    let outcome = ledger.ingest(message, now: now, onAccepted: keep ? { consumed.add($0, in: $1) } : nil)
                    tally.add(topic: message.position.topicPartition.topic, outcome)
                }
                memory?.addPending(consumed)
            }
            memory?.keepUp()
            metrics.record(tally)
            counters.withLock {
                $0.accepted += tally.accepted.values.reduce(0, +)
                $0.rejected += tally.rejected.values.reduce(0, +)
            }
        }
    }

    /// Pauses every owned partition while unflushed work is over the limit (again on each poll, so that partitions
    /// assigned meanwhile are paused too) and resumes them once flushes bring it under half the limit.
    private func applyBackpressure(_ consumer: KafkaConsumer) {
        let (owned, bytes) = ledger.withLock { ($0.assigned, $0.pendingBytes) }
        pendingBytes.store(bytes, ordering: .relaxed)
        let limit = configuration.pendingLimitBytes
        let wasPaused = paused.load(ordering: .relaxed)
        let pause = wasPaused ? bytes > limit / 2 : bytes > limit
        do {
            if pause {
                try consumer.setPaused(true, owned)
            } else if wasPaused {
                try consumer.setPaused(false, owned)
            }
        } catch {
            logger.warning("cannot pause or resume partitions", metadata: ["error": "\(error)"])
            return
        }
        guard pause != wasPaused else { return }
        paused.store(pause, ordering: .relaxed)
        if pause {
            logger.warning("pausing consumption: unflushed work is over the limit (are flushes to PostgreSQL failing?)", metadata: [
                "pending_bytes": "\(bytes)", "limit_bytes": "\(limit)"])
        } else {
            logger.notice("resuming consumption: flushes caught up", metadata: ["pending_bytes": "\(bytes)"])
        }
    }

    /// Whether consumption is paused by backpressure, and the unflushed bytes as of the last poll.
    public var backpressure: (paused: Bool, pendingBytes: Int) {
        (paused.load(ordering: .relaxed), pendingBytes.load(ordering: .relaxed))
    }

    /// librdkafka assigned partitions: read their stored offsets and start owning them from there.
    /// If PostgreSQL cannot be read, the partitions stay unowned (their messages are ignored) and are retried.
    private func assigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        do {
            let stored = try blockingAwait(limit: Self.storeWaitLimit) { [store] in try await store.storedOffsets(for: partitions) }
            refreshPartitionList()
            ledger.withLock { ledger in
                for partition in partitions { ledger.assign(partition, storedOffset: stored[partition]) }
                memory?.ownershipChanged(pending: ledger.pendingDeltas)
            }
            return stored
        } catch {
            logger.error("cannot read stored offsets; partitions will be retried", metadata: ["error": "\(error)"])
            ledger.withLock { ledger in
                for partition in partitions { ledger.markStale(partition) }
                memory?.ownershipChanged(pending: ledger.pendingDeltas)
            }
            return [:]
        }
    }

    private func revoked(_ partitions: [TopicPartition]) {
        ledger.withLock { ledger in
            for partition in partitions { ledger.revoke(partition) }
            memory?.ownershipChanged(pending: ledger.pendingDeltas)
        }
    }

    /// Seeks partitions whose stored offset moved under us back to the stored offset, then owns them again.
    private func reseekStalePartitions(_ consumer: KafkaConsumer) {
        let stale = ledger.withLock { $0.takeStale() }
        guard !stale.isEmpty else { return }
        do {
            let stored = try blockingAwait(limit: Self.storeWaitLimit) { [store] in try await store.storedOffsets(for: stale) }
            let positions = Dictionary(uniqueKeysWithValues: stale.map { ($0, stored[$0] ?? KafkaOffset.beginning) })
            try consumer.seek(positions)
            ledger.withLock { ledger in
                for partition in stale { ledger.assign(partition, storedOffset: stored[partition]) }
            }
            logger.info("partitions sought to their stored offsets", metadata: ["partitions": "\(stale.map(\.description).joined(separator: ","))"])
        } catch {
            logger.warning("cannot seek stale partitions; will retry", metadata: ["error": "\(error)"])
            ledger.withLock { ledger in
                for partition in stale { ledger.markStale(partition) }
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    // MARK: - Flushing

    /// How a flush ended.
    enum FlushOutcome {
        /// The batch is durable, or there was nothing to write, or an offset conflict dropped a partition's part.
        case done
        /// The store failed: the batch is put back for the next attempt.
        case failed
        /// The stop's timeout cancelled the write: the batch is put back, and no attempt should follow.
        case cutShort
        /// The write did not return within `flushTimeout`: PostgreSQL or the connection to it hangs.
        case hung
    }

    /// Writes one batch.
    @discardableResult
    func flushOnce(consumer: KafkaConsumer) async -> FlushOutcome {
        guard await settleArchive() else { return .failed }
        let taken = ledger.withLock { ledger -> (FlushBatch, ChangeApplied<(epoch: UInt64, layer: CubeMemory)>?)? in
            guard let batch = ledger.takeBatch() else { return nil }
            // What is left unflushed: the early flush (`sleepUntilFlushIsDue`) must not see the batch just taken.
            pendingBytes.store(ledger.pendingBytes, ordering: .relaxed)
            return (batch, memory?.flushStarted())
        }
        guard let (batch, moved) = taken else { return .done }
        let inFlight = await moved?.value()
        let started = ContinuousClock.now
        var writing = false
        do {
            let now = Self.now()
            let segments = try archive.withLock { try $0?.append(batch.parts, now: now) } ?? []
            let rejected = batch.rejected
            if let deadLetters = deadLetters.withLock({ $0 }), !rejected.isEmpty {
                try await awaitBlocking { try deadLetters.send(rejected) }
                metrics.recordDeadLetters(rejected.count)
            }
            writing = true
            let layer = inFlight?.layer
            try await awaitTask(limit: configuration.flushTimeout) { [store] in
                try await store.write(batch, layer: layer, archive: segments)
            }
            archive.withLock { $0?.committed() }
            if let inFlight { memory?.flushCommitted(epoch: inFlight.epoch) }
            FreedMemory.release()
            consumer.commitAsync(Dictionary(uniqueKeysWithValues: batch.parts.map { ($0.topicPartition, $0.newOffset) }))
            counters.withLock { $0.flushes += 1 }
            metrics.recordFlush(outcome: "committed", duration: ContinuousClock.now - started, rows: batch.rowCount)
            logger.debug("flushed", metadata: ["partitions": "\(batch.parts.count)", "duration": "\(ContinuousClock.now - started)"])
            return .done
        } catch let conflict as OffsetConflict {
            rollBackArchive()
            metrics.recordFlush(outcome: "conflict", duration: ContinuousClock.now - started, rows: 0)
            logger.warning("offset conflict; partition will be consumed again from its stored offset", metadata: ["detail": "\(conflict)"])
            ledger.withLock { ledger in
                ledger.restore(batch)
                ledger.markStale(conflict.topicPartition)
                memory?.flushFailed(pending: ledger.pendingDeltas, ownershipChanged: true)
            }
            return .done
        } catch is WaitTimedOut {
            // Its transaction may still commit once PostgreSQL answers again: nothing more is written by this process.
            metrics.recordFlush(outcome: "hung", duration: ContinuousClock.now - started, rows: 0)
            logger.critical("a flush did not return within --flush-timeout; PostgreSQL or the connection to it hangs. Stopping: a restart resumes from the offsets PostgreSQL stored",
                            metadata: ["flush_timeout": "\(configuration.flushTimeout)"])
            return .hung
        } catch {
            // A write that failed may have failed after PostgreSQL committed it (its answer lost): its archive frames
            // stay until the next flush or the stop settles them (`settleArchive`).
            if !writing { rollBackArchive() }
            let cutShort = Task.isCancelled
            metrics.recordFlush(outcome: cutShort ? "cut_short" : "failed", duration: ContinuousClock.now - started, rows: 0)
            if cutShort {
                logger.warning("stop cut short (--shutdown-timeout): what was not flushed will be consumed again")
            } else {
                logger.error("flush failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
            }
            ledger.withLock { ledger in
                ledger.restore(batch)
                memory?.flushFailed(pending: ledger.pendingDeltas)
            }
            return cutShort ? .cutShort : .failed
        }
    }
}

// MARK: - Archive

extension IngestService {
    /// The wall clock as a `Timestamp`.
    static func now() -> Timestamp {
        Timestamp.wallClock()
    }

    /// Opens the archive directory and repairs what a previous process left open: each open segment is cut to the
    /// length stored with the last committed flush and sealed.
    fileprivate func openArchive() async throws {
        guard let directory = configuration.archiveDirectory else { return }
        let writer = try ArchiveWriter(directory: URL(fileURLWithPath: directory), segmentBytes: configuration.archiveSegmentBytes)
        let leftovers = try writer.leftovers()
        if !leftovers.isEmpty {
            let recovered = try writer.recover(committed: try await store.archiveSegmentLengths(leftovers))
            logger.notice("archive: repaired the segments left open by the last run", metadata: [
                "sealed": "\(recovered.sealed)", "removed_uncommitted": "\(recovered.removed)"])
        }
        archive.withLock { $0 = writer }
        logger.info("archiving consumed messages", metadata: ["directory": "\(directory)"])
    }

    /// Cuts off what the failed flush appended.
    fileprivate func rollBackArchive() {
        repairArchive { try $0.rolledBack() }
    }

    /// Settles the archive frames of a flush whose write failed (`ArchiveWriter.settle`): kept if PostgreSQL stored
    /// them, so the flush had committed and only its answer was lost, cut off otherwise. False while PostgreSQL
    /// cannot say: nothing may be appended until it does.
    fileprivate func settleArchive() async -> Bool {
        let names = archive.withLock { $0?.unsettled ?? [] }
        guard !names.isEmpty else { return true }
        let stored: [String: Int64]
        do {
            stored = try await store.archiveSegmentLengths(names)
        } catch {
            logger.warning("archive: cannot learn yet whether the last failed flush committed; will ask again", metadata: ["error": "\(error)"])
            return false
        }
        var landed: [TopicPartition] = []
        repairArchive { landed = try $0.settle(stored: stored) }
        if landed.isEmpty {
            logger.notice("archive: the failed flush had not committed; its frames are cut off")
            return true
        }
        logger.notice("archive: the failed flush had committed (its answer was lost); its frames stay",
                      metadata: ["partitions": "\(landed.map(\.description).joined(separator: ","))"])
        // Its batch went back to the ledger as failed, but PostgreSQL stored these partitions' offsets past it: they
        // are consumed again from there, as after an offset conflict, rather than written again to meet one.
        ledger.withLock { ledger in
            for partition in landed { ledger.markStale(partition) }
            memory?.ownershipChanged(pending: ledger.pendingDeltas)
        }
        return true
    }

    /// Runs `repair` on the archive. If it fails the archive could hold lines that are not counted, so the service
    /// stops; the next start repairs the segments from PostgreSQL.
    private func repairArchive(_ repair: (ArchiveWriter) throws -> Void) {
        do {
            try archive.withLock { writer in try writer.map(repair) }
        } catch {
            logger.critical("archive: cannot cut back an uncommitted flush; stopping (a restart repairs the archive)", metadata: ["error": "\(error)"])
            fatalError("archive rollback failed: \(error)")
        }
    }

    /// Seals segments that are full, past their hour, or of partitions no longer owned. A segment that cannot be
    /// sealed stays open on disk, and the next start seals it.
    fileprivate func sealArchiveSegments() {
        let owned = Set(ledger.withLock { $0.assigned })
        do {
            try archive.withLock { try $0?.sealFinished(now: Self.now(), keeping: owned) }
        } catch {
            logger.error("archive: cannot seal a segment; the next start seals it", metadata: ["error": "\(error)"])
        }
    }
}

// MARK: - Gauges

extension IngestService {
    /// Updates the gauges of `/metrics`: lag of each owned partition (its high watermark as last fetched, less the
    /// offset stored in PostgreSQL: what is not yet flushed), unflushed bytes, pause state and memory held.
    fileprivate func recordGauges(_ consumer: KafkaConsumer) {
        let stored = ledger.withLock { $0.storedOffsets }
        var lag: [TopicPartition: Int64] = [:]
        for (partition, offset) in stored {
            guard let watermarks = consumer.cachedWatermarks(partition) else { continue }
            lag[partition] = max(0, watermarks.high - (offset ?? watermarks.low))
        }
        metrics.recordLag(lag)
        self.lag.store(lag.values.reduce(0, +), ordering: .relaxed)
        let state = backpressure
        metrics.recordIngestState(pendingBytes: state.pendingBytes, paused: state.paused)
        if let layers = memory?.snapshot() {
            metrics.recordMemory(dayBuckets: layers.daysHeld, bytes: layers.byteCount)
        }
    }
}

// MARK: - Memory

extension IngestService {
    /// The current UTC day by the wall clock.
    static func today() -> Int64 {
        Timestamp.wallClock().daysSinceEpoch
    }

    /// Reads the partition list of the subscribed topics (on the polling thread, inside a rebalance).
    fileprivate func refreshPartitionList() {
        guard memory != nil, let consumer = consumer.withLock({ $0 }) else { return }
        do {
            let partitions = try consumer.partitions(of: configuration.topics)
            allPartitions.withLock { $0 = partitions }
        } catch {
            allPartitions.withLock { $0 = nil }
            logger.warning("cannot list the topics' partitions; queries go to PostgreSQL until the next rebalance", metadata: ["error": "\(error)"])
        }
    }

    /// When a `backbeat rebuild` replaced stored aggregates, the in-memory days are stale: answer from PostgreSQL
    /// until the snapshot is loaded again (on this same loop).
    func noticeRebuilds() async {
        guard let memory, let latest = try? await store.latestRebuild() else { return }
        let previous = seenRebuild.withLock { seen in
            defer { seen = latest }
            return seen
        }
        guard let previous, previous != latest else { return }
        memory.storedAggregatesReplaced()
        logger.notice("a rebuild replaced stored aggregates; reloading the in-memory days", metadata: ["rebuild": "\(latest)"])
    }

    /// When this instance owns every partition but memory is not complete, loads the retained window from
    /// PostgreSQL and installs it if the ledger still stands exactly at the snapshot's offsets (flushes run on
    /// this same loop, so none is in flight).
    func loadSnapshotIfOwningEverything() async {
        guard let memory, !memory.isComplete,
              let all = allPartitions.withLock({ $0 }), !all.isEmpty,
              ledger.withLock({ Set($0.assigned) == all })
        else { return }
        let started = ContinuousClock.now
        let snapshot: StoredSnapshot
        do {
            snapshot = try await store.snapshot(fromDay: memory.configuration.firstRetainedDay(today: Self.today()))
        } catch {
            logger.warning("cannot load the in-memory window from PostgreSQL; will retry", metadata: ["error": "\(error)"])
            return
        }
        // Seal and trim before installing, outside every lock: loaded rows arrive as open cells.
        var loaded = snapshot.memory
        let (sealed, dropped) = memory.trim(&loaded, today: Self.today())
        let installed = ledger.withLock { ledger -> ChangeApplied<Void>? in
            let stored = ledger.storedOffsets
            guard Set(stored.keys) == all, stored.allSatisfy({ $0.value == snapshot.offsets[$0.key] }) else { return nil }
            return memory.install(loaded, pending: ledger.pendingDeltas, sealedDays: sealed, droppedDays: dropped)
        }
        if let installed {
            await installed.value()
            logger.info("answering from memory: loaded the retained window", metadata: [
                "from_day": "\(RFC3339.formatDate(CivilDate(daysSinceEpoch: loaded.horizonDay)))",
                "bytes": "\(loaded.byteCount)", "duration": "\(ContinuousClock.now - started)",
            ])
        }
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
