import BackbeatCore
import BackbeatKafka
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The ingest's Kafka source: joins the consumer group and polls on a thread of its own (librdkafka's calls block),
/// feeding each message to the `IngestLedger` and what it adds to the in-memory layers; pauses the owned partitions
/// while unflushed work is over `--pending-limit`. Rebalance callbacks run on the polling thread and never wait for
/// PostgreSQL, so that no rebalance of the group waits for it: an assigned partition starts at offset 0 and waits
/// for its stored offset, read by a task of its own (`StoredOffsetReads`); once read, the polling thread seeks the
/// partition there and owns it. A revocation drops the revoked partitions' unflushed work, which their next
/// owner consumes again from the stored offsets. A position the broker no longer has becomes an `OffsetGap`, stored
/// with the next flush, and the partition goes on from the log's start or waits (`--offset-gap-policy`).
///
/// Runs until a graceful shutdown (or cancellation), then stops polling and returns once the thread has exited. It
/// does not close the consumer: the flusher's last flush comes first, then it leaves the group.
struct KafkaSource: Service {
    let ingest: IngestService
    let consumer: KafkaConsumer

    func run() async throws {
        let polling = ingest.startPollingThread(consumer)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await polling.value
            } onGracefulShutdown: { [ingest] in
                ingest.stopPolling.store(true, ordering: .relaxed)
            }
        } onCancel: { [ingest] in
            ingest.stopPolling.store(true, ordering: .relaxed)
        }
    }
}

extension IngestService {
    /// How long a read of stored offsets may take before it counts as failed: the partitions then wait for the next
    /// one, made `readRetryDelay` later.
    static let storeWaitLimit: Duration = .seconds(10)
    static let readRetryDelay: Duration = .milliseconds(500)

    /// Creates the consumer, subscribed with this service's rebalance callbacks, and shares it (`consumer`).
    func makeConsumer() throws -> KafkaConsumer {
        let consumer = try KafkaConsumer(
            brokers: configuration.brokers, groupID: configuration.groupID, topics: configuration.topics,
            extra: configuration.consumerProperties, logger: logger,
            onAssign: { [self] partitions in assigned(partitions) },
            onRevoke: { [self] partitions, lost in revoked(partitions, lost: lost) },
            onOffsetOutOfRange: { [self] position in offsetOutOfRange(position) })
        self.consumer.withLock { $0 = consumer }
        logger.info("consuming", metadata: ["brokers": "\(configuration.brokers)", "topics": "\(configuration.topics.joined(separator: ","))", "group": "\(configuration.groupID)"])
        return consumer
    }

    /// Starts the OS thread that polls; the returned task (also `pollingDone`) finishes when it exits.
    fileprivate func startPollingThread(_ consumer: KafkaConsumer) -> Task<Void, Never> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let thread = Thread { [self] in
            pollLoop(consumer)
            continuation.finish()
        }
        thread.name = "backbeat-kafka-poll"
        let done = Task { for await _ in stream {} }
        pollingDone.withLock { $0 = done }
        thread.start()
        return done
    }

    private func pollLoop(_ consumer: KafkaConsumer) {
        let reads = StoredOffsetReads()
        while !stopPolling.load(ordering: .relaxed) {
            readStoredOffsets(reads)
            ownPartitionsRead(reads, consumer)
            applyBackpressure(consumer)
            let messages = consumer.poll(timeoutMs: 100, maxMessages: configuration.pollBatchSize)
            guard !messages.isEmpty else { continue }
            let now = Timestamp.wallClock()
            var tally = ServiceMetrics.PollTally()
            let resumptions = ledger.withLock { ledger in
                let polled = ledger.consume(messages, now: now, outcome: { message, outcome in
                    tally.add(topic: message.position.topicPartition.topic, outcome)
                })
                memory?.consumed(polled)
                return ledger.takeResumptions()
            }
            memory?.keepUp()
            metrics.record(tally)
            for resumption in resumptions { report(resumption) }
            counters.withLock {
                $0.accepted += tally.accepted.values.reduce(0, +)
                $0.rejected += tally.rejected.values.reduce(0, +)
            }
        }
    }

    /// The first message consumed from a partition since it was assigned (or sought again): how long it waited.
    private func report(_ resumption: IngestLedger.Resumption) {
        metrics.recordResumption(topic: resumption.position.topicPartition.topic, waited: resumption.waited)
        logger.info("partition consumed again", metadata: [
            "partition": "\(resumption.position.topicPartition)", "offset": "\(resumption.position.offset)",
            "waited_seconds": "\(Double(resumption.waited.nanoseconds) / 1e9)"])
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

    /// librdkafka assigned partitions: they wait for their stored offsets (`takeStale`, read by `readStoredOffsets`),
    /// their messages ignored until then. Meanwhile they start at offset 0, an offset no later than any stored one:
    /// messages fetched from there before the seek to the stored offset, if librdkafka hands some over after it, come
    /// in order from before the stored offset, and the ledger ignores those below it. (From the log's end, as tried
    /// first, such messages came from after it, and the ledger, taking them as the next ones, skipped the rest.) Not
    /// the logical beginning either: a position librdkafka must ask the broker for can be answered after the seek.
    private func assigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        changeOwnership(of: partitions) { $0.markStale($1) }
        return Dictionary(uniqueKeysWithValues: partitions.map { ($0, 0) })
    }

    /// librdkafka takes partitions away: their consumed work not yet flushed is dropped (the next owner consumes it
    /// again from the stored offsets; a flush in flight commits, or meets an offset conflict if it comes second).
    private func revoked(_ partitions: [TopicPartition], lost: Bool) {
        let unflushed = ledger.withLock { $0.hasUnflushedWork(partitions) }
        metrics.recordHandOver(outcome: lost ? "lost" : unflushed ? "unflushed" : "flushed")
        changeOwnership(of: partitions) { $0.revoke($1) }
    }

    /// Starts a read of the stored offsets the ledger's waiting partitions need, on a task of its own; its outcome
    /// joins `reads` (a failed one after `readRetryDelay`).
    private func readStoredOffsets(_ reads: StoredOffsetReads) {
        guard let read = ledger.withLock({ $0.takeStale() }) else { return }
        Task { [store] in
            do {
                let stored = try await awaitTask(limit: Self.storeWaitLimit) { try await store.storedOffsets(for: read.partitions) }
                reads.finished(read, .success(stored))
            } catch {
                try? await Task.sleep(for: Self.readRetryDelay)
                reads.finished(read, .failure(error))
            }
        }
    }

    /// Seeks the partitions whose stored offsets were read, and still wait for them, to those offsets, and owns them
    /// from there. A read or a seek that failed has them wait for the next read.
    private func ownPartitionsRead(_ reads: StoredOffsetReads, _ consumer: KafkaConsumer) {
        for (read, outcome) in reads.take() {
            let waiting = ledger.withLock { ledger in read.partitions.filter { ledger.isReading($0, for: read) } }
            guard !waiting.isEmpty else { continue }
            let stored: [TopicPartition: Int64]
            switch outcome {
            case .failure(let error):
                logger.error("cannot read stored offsets; partitions will be retried", metadata: [
                    "partitions": "\(waiting.map(\.description).joined(separator: ","))", "error": "\(error)"])
                ledger.withLock { $0.readFailed(read) }
                continue
            case .success(let offsets):
                stored = offsets
            }
            do {
                // Restarted rather than sought: a partition that waited at a gap is no longer fetched, and seek would
                // not start it again.
                try consumer.restartFetching(Dictionary(uniqueKeysWithValues: waiting.map { ($0, stored[$0] ?? KafkaOffset.beginning) }))
            } catch {
                logger.warning("cannot seek partitions to their stored offsets; will retry", metadata: ["error": "\(error)"])
                ledger.withLock { $0.readFailed(read) }
                Thread.sleep(forTimeInterval: 0.5)
                continue
            }
            refreshPartitionList()
            changeOwnership(of: waiting) { $0.assign($1, storedOffset: stored[$1]) }
            logger.info("consuming partitions from their stored offsets", metadata: [
                "partitions": "\(waiting.map { "\($0):\(stored[$0].map(String.init) ?? "start")" }.joined(separator: ","))"])
        }
    }

    /// The broker no longer has `position`: reads where its log starts and ends, notes the gap in the ledger (the
    /// next flush stores it), says so (log, metrics, `/readyz`) and goes on from the log's start, or leaves the
    /// partition waiting (`--offset-gap-policy stop`, or a position past the log's end: counting again what is
    /// there could count it twice). When the log's offsets cannot be read, the partition is sought again from its
    /// stored offset and the same happens on the next attempt.
    private func offsetOutOfRange(_ position: MessagePosition) {
        guard let consumer = consumer.withLock({ $0 }) else { return }
        let partition = position.topicPartition
        // Not owned (yet): nothing of it is consumed; its seek to the stored offset comes, and meets the gap, if any.
        guard ledger.withLock({ $0.owns(partition) }) else { return }
        // No position yet (a logical offset: librdkafka looked for a committed one, and Backbeat commits none by
        // default): nothing was skipped; the partition is sought to its stored offset instead.
        guard position.offset >= 0 else {
            logger.notice("a partition without a position was reset; seeking it to its stored offset", metadata: ["partition": "\(partition)"])
            changeOwnership(of: [partition]) { $0.markStale($1) }
            return
        }
        let log: (low: Int64, high: Int64)
        do {
            log = try consumer.queryWatermarks(partition)
        } catch {
            logger.warning("offset out of range, and the broker's log offsets cannot be read; will try again", metadata: [
                "partition": "\(partition)", "offset": "\(position.offset)", "error": "\(error)"])
            changeOwnership(of: [partition]) { $0.markStale($1) }
            Thread.sleep(forTimeInterval: 0.5)
            return
        }
        var gap = OffsetGap(topicPartition: partition, firstMissing: position.offset, logStart: log.low, logEnd: log.high,
                            detectedAt: Self.now(), resumedAt: nil)
        if gap.isDeletedRange && configuration.gapPolicy == .resume { gap.resumedAt = log.low }
        guard ledger.withLock({ $0.recordGap(gap) }) else { return }
        recentGaps.withLock { gaps in
            gaps.append(gap)
            if gaps.count > Self.recentGapLimit { gaps.removeFirst(gaps.count - Self.recentGapLimit) }
        }
        metrics.recordOffsetGap(gap)
        var metadata: Logger.Metadata = [
            "topic": "\(partition.topic)", "partition": "\(partition.partition)", "first_missing": "\(gap.firstMissing)",
            "log_start": "\(gap.logStart)", "log_end": "\(gap.logEnd)"]
        if let last = gap.lastMissing { metadata["last_missing"] = "\(last)" }
        if let missing = gap.missingCount { metadata["missing"] = "\(missing)" }
        guard let resumedAt = gap.resumedAt else {
            logger.error("messages are missing: \(gap.rangeDescription); the partition waits until `backbeat offsets reset` moves its offset", metadata: metadata)
            return
        }
        logger.error("messages are missing: \(gap.rangeDescription) were deleted from the broker before they were read; recorded in offset_gaps, consuming on from \(resumedAt)", metadata: metadata)
        do {
            try consumer.restartFetching([partition: resumedAt])
        } catch {
            logger.warning("cannot move past the gap; the partition is sought again from its stored offset", metadata: ["error": "\(error)"])
            changeOwnership(of: [partition]) { $0.markStale($1) }
        }
    }

    /// Reads the partition list of the subscribed topics (on the polling thread, as partitions start being owned).
    private func refreshPartitionList() {
        guard memory != nil, let consumer = consumer.withLock({ $0 }) else { return }
        do {
            let partitions = try consumer.partitions(of: configuration.topics)
            allPartitions.withLock { $0 = partitions }
        } catch {
            allPartitions.withLock { $0 = nil }
            logger.warning("cannot list the topics' partitions; queries go to PostgreSQL until the next rebalance", metadata: ["error": "\(error)"])
        }
    }
}

/// The reads of stored offsets that finished, with their outcome, until the polling thread takes them.
final class StoredOffsetReads: Sendable {
    private let done = Mutex<[(IngestLedger.StoredOffsetRead, Result<[TopicPartition: Int64], any Error>)]>([])

    func finished(_ read: IngestLedger.StoredOffsetRead, _ outcome: Result<[TopicPartition: Int64], any Error>) {
        done.withLock { $0.append((read, outcome)) }
    }

    func take() -> [(IngestLedger.StoredOffsetRead, Result<[TopicPartition: Int64], any Error>)] {
        done.withLock { taken in
            defer { taken.removeAll() }
            return taken
        }
    }
}
