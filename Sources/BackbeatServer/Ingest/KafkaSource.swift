import BackbeatCore
import BackbeatKafka
import Foundation
import Logging
import ServiceLifecycle

/// The ingest's Kafka source: joins the consumer group and polls on a thread of its own (librdkafka's calls block),
/// feeding each message to the `IngestLedger` and what it adds to the in-memory layers; pauses the owned partitions
/// while unflushed work is over `--pending-limit`. Rebalances are handled on the polling thread: an assignment reads
/// the stored offsets from PostgreSQL with a time limit (`storeWaitLimit`); a revocation first has the flusher write
/// the revoked partitions' consumed work (up to `handOverLimit`), so that the next owner starts where this one
/// stopped, then drops what is left. A position the broker no longer has becomes an `OffsetGap`, stored with the
/// next flush, and the partition goes on from the log's start or waits (`--offset-gap-policy`).
///
/// Runs until a graceful shutdown (or cancellation), then stops polling and returns once the thread has exited. It
/// does not close the consumer: the flusher's last flush comes first, then it leaves the group.
struct KafkaSource: Service {
    let ingest: IngestService

    func run() async throws {
        let consumer = try ingest.makeConsumer()
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
    /// How long the polling thread waits for PostgreSQL (stored offsets, inside a rebalance callback) before it
    /// treats the read as failed: the partitions are then marked stale and sought again on a later poll.
    static let storeWaitLimit: Duration = .seconds(10)

    /// Creates the consumer, subscribed with this service's rebalance callbacks, and shares it (`consumer`).
    fileprivate func makeConsumer() throws -> KafkaConsumer {
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
        while !stopPolling.load(ordering: .relaxed) {
            reseekStalePartitions(consumer)
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

    /// librdkafka assigned partitions: read their stored offsets and start owning them from there.
    /// If PostgreSQL cannot be read, the partitions stay unowned (their messages are ignored) and are retried.
    private func assigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        do {
            let stored = try blockingAwait(limit: Self.storeWaitLimit) { [store] in try await store.storedOffsets(for: partitions) }
            refreshPartitionList()
            changeOwnership(of: partitions) { $0.assign($1, storedOffset: stored[$1]) }
            return stored
        } catch {
            logger.error("cannot read stored offsets; partitions will be retried", metadata: ["error": "\(error)"])
            changeOwnership(of: partitions) { $0.markStale($1) }
            return [:]
        }
    }

    /// How long a revocation waits for the flusher to write the revoked partitions' consumed work.
    static let handOverLimit: Duration = .seconds(5)

    /// librdkafka takes partitions away: unless they are lost (already another member's), their consumed work is
    /// flushed first, then whatever is left of it is dropped (the next owner consumes it again).
    private func revoked(_ partitions: [TopicPartition], lost: Bool) {
        if lost {
            metrics.recordHandOver(outcome: "lost")
        } else {
            metrics.recordHandOver(outcome: flushBeforeHandOver(partitions) ? "flushed" : "unflushed")
        }
        changeOwnership(of: partitions) { $0.revoke($1) }
    }

    /// Has the flusher write now and waits until none of `partitions`' consumed work is unflushed or in flight, up
    /// to `handOverLimit`; true when it got there. Does not wait when the flusher's loop is not running (at the
    /// stop the final flush has come first).
    private func flushBeforeHandOver(_ partitions: [TopicPartition]) -> Bool {
        let handedOver = { [self] in ledger.withLock { !flushInFlight.load(ordering: .relaxed) && !$0.hasUnflushedWork(partitions) } }
        if handedOver() { return true }
        guard flusherRunning.load(ordering: .relaxed) else { return false }
        flushRequested.store(true, ordering: .relaxed)
        let deadline = ContinuousClock.now + Self.handOverLimit
        while ContinuousClock.now < deadline, flusherRunning.load(ordering: .relaxed) {
            if handedOver() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        logger.warning("hand-over: the revoked partitions' consumed work was not flushed in time; their next owner consumes it again", metadata: [
            "partitions": "\(partitions.map(\.description).joined(separator: ","))", "limit": "\(Self.handOverLimit)"])
        return false
    }

    /// The broker no longer has `position`: reads where its log starts and ends, notes the gap in the ledger (the
    /// next flush stores it), says so (log, metrics, `/readyz`) and goes on from the log's start, or leaves the
    /// partition waiting (`--offset-gap-policy stop`, or a position past the log's end: counting again what is
    /// there could count it twice). When the log's offsets cannot be read, the partition is sought again from its
    /// stored offset and the same happens on the next attempt.
    private func offsetOutOfRange(_ position: MessagePosition) {
        guard let consumer = consumer.withLock({ $0 }) else { return }
        let partition = position.topicPartition
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

    /// Seeks partitions whose stored offset moved under us back to the stored offset, then owns them again.
    private func reseekStalePartitions(_ consumer: KafkaConsumer) {
        let stale = ledger.withLock { $0.takeStale() }
        guard !stale.isEmpty else { return }
        do {
            let stored = try blockingAwait(limit: Self.storeWaitLimit) { [store] in try await store.storedOffsets(for: stale) }
            let positions = Dictionary(uniqueKeysWithValues: stale.map { ($0, stored[$0] ?? KafkaOffset.beginning) })
            // Restarted rather than sought: a partition that waited at a gap is no longer fetched, and seek would not
            // start it again.
            try consumer.restartFetching(positions)
            changeOwnership(of: stale) { $0.assign($1, storedOffset: stored[$1]) }
            logger.info("partitions sought to their stored offsets", metadata: ["partitions": "\(stale.map(\.description).joined(separator: ","))"])
        } catch {
            logger.warning("cannot seek stale partitions; will retry", metadata: ["error": "\(error)"])
            changeOwnership(of: stale) { $0.markStale($1) }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    /// Reads the partition list of the subscribed topics (on the polling thread, inside a rebalance).
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
