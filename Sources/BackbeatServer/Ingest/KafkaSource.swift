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
/// for its stored offset, read by a task of its own; once read, the polling thread seeks the
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
        while !stopPolling.load(ordering: .relaxed) {
            readStoredOffsets()
            seekPartitionsRead(consumer)
            applyBackpressure(consumer)
            let messages = consumer.poll(timeoutMs: 100, maxMessages: configuration.pollBatchSize)
            guard !messages.isEmpty else { continue }
            let now = Timestamp.wallClock()
            var tally = ServiceMetrics.PollTally()
            let resumptions = change { state in
                state.consumed(messages, now: now, outcome: { message, outcome in
                    tally.add(topic: message.position.topicPartition.topic, outcome)
                })
            }
            state.keepUp()
            metrics.record(tally)
            for resumption in resumptions { report(resumption) }
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
        guard let action = change({ $0.backpressure() }) else { return }
        do {
            switch action {
            case .pause(let partitions): try consumer.setPaused(true, partitions)
            case .resume(let partitions): try consumer.setPaused(false, partitions)
            }
        } catch {
            logger.warning("cannot pause or resume partitions", metadata: ["error": "\(error)"])
            return
        }
        let (flipped, bytes) = change { ($0.backpressureApplied(action), $0.pendingBytes) }
        guard flipped else { return }
        if case .pause = action {
            logger.warning("pausing consumption: unflushed work is over the limit (are flushes to PostgreSQL failing?)", metadata: [
                "pending_bytes": "\(bytes)", "limit_bytes": "\(configuration.pendingLimitBytes)"])
        } else {
            logger.notice("resuming consumption: flushes caught up", metadata: ["pending_bytes": "\(bytes)"])
        }
    }

    /// librdkafka assigned partitions: they wait for their stored offsets (`IngestState.nextStoredOffsetRead`, read
    /// by `readStoredOffsets`), their messages ignored until then. Meanwhile they start at offset 0, an offset no
    /// later than any stored one: messages fetched from there before the seek to the stored offset, if librdkafka
    /// hands some over after it, come in order from before the stored offset, and the ledger ignores those below it.
    /// (From the log's end, as tried first, such messages came from after it, and the ledger, taking them as the next
    /// ones, skipped the rest.) Not the logical beginning either: a position librdkafka must ask the broker for can
    /// be answered after the seek.
    private func assigned(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        change { $0.assigned(partitions) }
        return Dictionary(uniqueKeysWithValues: partitions.map { ($0, 0) })
    }

    /// librdkafka takes partitions away: their consumed work not yet flushed is dropped (the next owner consumes it
    /// again from the stored offsets; a flush in flight commits, or meets an offset conflict if it comes second).
    private func revoked(_ partitions: [TopicPartition], lost: Bool) {
        let handOver = change { $0.revoked(partitions, lost: lost) }
        metrics.recordHandOver(outcome: handOver.rawValue)
    }

    /// Starts the read of stored offsets the state's waiting partitions need, on a task of its own (after
    /// `readRetryDelay` when the last one failed); its outcome goes back to the state, which has the polling thread
    /// seek the partitions still waiting (`seekPartitionsRead`).
    private func readStoredOffsets() {
        guard let (read, afterFailure) = change({ $0.nextStoredOffsetRead() }) else { return }
        Task { [self] in
            if afterFailure { try? await Task.sleep(for: Self.readRetryDelay) }
            var stored: [TopicPartition: Int64]?
            var windows: [TopicPartition: DedupWindow] = [:]
            do {
                // The offsets first, then the windows: a window read later can only be newer than its offset (a
                // flush of the partition's last owner committed in between), and then this owner's first flush finds
                // the offset moved and is refused (`OffsetConflict`: both are read again). Windows older than their
                // offsets would miss ids and count their resends again.
                stored = try await awaitTask(limit: Self.storeWaitLimit) { [store] in try await store.storedOffsets(for: read.partitions) }
                if configuration.dedup != nil { windows = try await loadDedupWindows(read.partitions) }
            } catch {
                logger.error("cannot read stored offsets; partitions will be retried", metadata: [
                    "partitions": "\(read.partitions.map(\.description).joined(separator: ","))", "error": "\(error)"])
                stored = nil
            }
            change { $0.storedOffsetsRead(read, stored, windows: windows) }
        }
    }

    /// The dedup windows the flushes stored for `partitions`, loaded before they are consumed (how long that took
    /// goes to the log and `/metrics`).
    private func loadDedupWindows(_ partitions: [TopicPartition]) async throws -> [TopicPartition: DedupWindow] {
        let started = ContinuousClock.now
        let windows = try await awaitTask(limit: Self.storeWaitLimit) { [store] in try await store.storedDedupWindows(for: partitions) }
        let took = ContinuousClock.now - started
        let ids = windows.values.reduce(0) { $0 + $1.count }
        metrics.recordDedupLoad(seconds: Double(took.nanoseconds) / 1e9, ids: ids)
        logger.info("loaded the dedup windows of assigned partitions", metadata: [
            "partitions": "\(partitions.count)", "ids": "\(ids)", "duration": "\(took)"])
        return windows
    }

    /// Seeks the partitions whose stored offsets were read, and still wait for them, to those offsets, and owns them
    /// from there. A seek that failed has them wait for the next read.
    private func seekPartitionsRead(_ consumer: KafkaConsumer) {
        for seek in change({ $0.takeSeeks() }) {
            do {
                // Restarted rather than sought: a partition that waited at a gap is no longer fetched, and seek would
                // not start it again.
                try consumer.restartFetching(seek.offsets.mapValues { $0 ?? KafkaOffset.beginning })
            } catch {
                logger.warning("cannot seek partitions to their stored offsets; will retry", metadata: ["error": "\(error)"])
                change { $0.seekFailed(seek) }
                continue
            }
            refreshPartitionList()
            let owned = change { $0.sought(seek) }
            logger.info("consuming partitions from their stored offsets", metadata: [
                "partitions": "\(owned.map { "\($0):\((seek.offsets[$0] ?? nil).map(String.init) ?? "start")" }.joined(separator: ","))"])
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
        guard state.read({ $0.ledger.owns(partition) }) else { return }
        // No position yet (a logical offset: librdkafka looked for a committed one, and Backbeat commits none by
        // default): nothing was skipped; the partition is sought to its stored offset instead.
        guard position.offset >= 0 else {
            logger.notice("a partition without a position was reset; seeking it to its stored offset", metadata: ["partition": "\(partition)"])
            change { $0.mustSeekStoredOffsets([partition]) }
            return
        }
        let log: (low: Int64, high: Int64)
        do {
            log = try consumer.queryWatermarks(partition)
        } catch {
            logger.warning("offset out of range, and the broker's log offsets cannot be read; will try again", metadata: [
                "partition": "\(partition)", "offset": "\(position.offset)", "error": "\(error)"])
            change { $0.mustSeekStoredOffsets([partition], afterFailure: true) }
            return
        }
        var gap = OffsetGap(topicPartition: partition, firstMissing: position.offset, logStart: log.low, logEnd: log.high,
                            detectedAt: Self.now(), resumedAt: nil)
        if gap.isDeletedRange && configuration.gapPolicy == .resume { gap.resumedAt = log.low }
        guard change({ $0.gapFound(gap) }) else { return }
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
            change { $0.mustSeekStoredOffsets([partition]) }
        }
    }

    /// Reads the partition list of the subscribed topics (on the polling thread, as partitions start being owned).
    private func refreshPartitionList() {
        guard memory != nil, let consumer = consumer.withLock({ $0 }) else { return }
        do {
            let partitions = try consumer.partitions(of: configuration.topics)
            change { $0.partitionsListed(partitions) }
        } catch {
            change { $0.partitionsListed(nil) }
            logger.warning("cannot list the topics' partitions; queries go to PostgreSQL until the next rebalance", metadata: ["error": "\(error)"])
        }
    }
}
