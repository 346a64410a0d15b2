import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import BackbeatStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The ingest's flusher: writes the state's batches to PostgreSQL exactly once, every `--flush-interval` or as soon
/// as a sixteenth of `--pending-limit` is unflushed, and the last one on a graceful shutdown, then leaves the consumer
/// group. What must not interleave with a flush runs on the same loop, between flushes: the archive (opened and
/// repaired first, appended by each flush, sealed after), and the in-memory layers' upkeep (a rebuild noticed, a
/// snapshot installed while no flush is in flight, days sealed: `MemoryUpkeep.swift`).
///
/// It owns what only flushes touch: the archive writer, the dead-letter producer, and the artist-partition pairs
/// stored. Everything else it reads and changes through the ingest's one state (`IngestService.change`).
final class Flusher: Service, Sendable {
    let ingest: IngestService
    let consumer: KafkaConsumer
    /// The archive of every consumed message (nil without `archiveDirectory`).
    private let archive = Mutex<ArchiveWriter?>(nil)
    /// Where rejected messages go besides `rejected_events` (nil: nowhere else).
    private let deadLetters = Mutex<DeadLetterTopic?>(nil)
    /// The artists on partitions the flushes have stored (`artist_partitions`): a flush stores only pairs not in here.
    private let storedArtistPartitions = Mutex<Set<ArtistPartition>>([])

    init(ingest: IngestService, consumer: KafkaConsumer) {
        self.ingest = ingest
        self.consumer = consumer
    }

    func run() async throws {
        try await openArchive()
        try openDeadLetters()
        try await flushUntilShutdown(consumer)
    }

    private var configuration: IngestConfiguration { ingest.configuration }
    private var store: Store { ingest.store }
    private var logger: Logger { ingest.logger }
    private var metrics: ServiceMetrics { ingest.metrics }
    private var memory: LiveMemory? { ingest.memory }
    private var postgresAtStop: PostgresAtStop { ingest.postgresAtStop }

    @discardableResult
    private func change<Result>(_ transition: (inout IngestState) -> Result) -> Result {
        ingest.change(transition)
    }
}

extension Flusher {
    /// How long a stop waits for the consumer to leave its group.
    static let leaveGroupLimit: Duration = .seconds(10)

    /// Sets up the dead-letter topic's producer, when one is configured.
    private func openDeadLetters() throws {
        guard let topic = configuration.deadLetterTopic else { return }
        let producer = try DeadLetterTopic(brokers: configuration.brokers, topic: topic, extra: configuration.kafka, logger: logger)
        deadLetters.withLock { $0 = producer }
        logger.info("sending rejected messages to the dead-letter topic", metadata: ["topic": "\(topic)"])
    }

    /// Flushes until a graceful shutdown, then flushes what is left, closes the archive and leaves the group.
    private func flushUntilShutdown(_ consumer: KafkaConsumer) async throws {
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
                // What other processes changed, asked only of a PostgreSQL that just answered a flush.
                if outcome == .done { await ingest.noticeStoredChanges() }
                await resumeWaitingPartitions()
                await ingest.loadSnapshotOfOwnedPartitions()
                memory?.maintain(today: IngestService.today())
            }
            return false
        } onGracefulShutdown: {}
        // The source has stopped polling when the group shuts down gracefully (it stops first); on cancellation or a
        // hung flush it may not have yet.
        await ingest.stopPollingAndWait()
        if hung { try await stopAfterHungFlush(consumer) }
        // Final flush, when PostgreSQL answers: retry for a while so that a clean stop leaves nothing to consume again.
        if ingest.state.read({ $0.ledger.hasUnflushedWork($0.ledger.assigned) }), await postgresAtStop.answers() {
            for attempt in 1...10 {
                let outcome = await flushOnce(consumer: consumer)
                if outcome == .hung { try await stopAfterHungFlush(consumer) }
                guard outcome == .failed else { break }
                logger.warning("final flush failed; retrying", metadata: ["attempt": "\(attempt)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        logResumeOffsets()
        if archive.withLock({ $0 != nil }) {
            if await postgresAtStop.answers(), await settleArchive() {
                try archive.withLock { try $0?.closeAll() }
            } else {
                logger.warning("archive: segments left open; the next start repairs them from the lengths PostgreSQL stored")
            }
        }
        // Leaving the group waits for the broker; with the broker gone it may never return.
        do {
            try await awaitBlocking(limit: Self.leaveGroupLimit) { consumer.close() }
        } catch {
            logger.warning("could not leave the consumer group in time (is the broker reachable?); the group moves the partitions on after session.timeout.ms",
                           metadata: ["error": "\(error)"])
        }
        ingest.consumer.withLock { $0 = nil }
    }

    /// Returns when a flush is due: `flushInterval` after the last one ended, or sooner once unflushed work (as of
    /// the last poll or batch taken) reaches `IngestConfiguration.earlyFlushBytes`.
    private func sleepUntilFlushIsDue() async throws {
        let due = ContinuousClock.now + configuration.flushInterval
        while ContinuousClock.now < due, ingest.state.read({ $0.pendingBytes }) < configuration.earlyFlushBytes {
            try await Task.sleep(for: min(.milliseconds(10), due - ContinuousClock.now))
        }
    }

    /// When owned partitions wait at a gap (`--offset-gap-policy stop`) and `backbeat offsets reset` moved their
    /// stored offset, consumes them again from there.
    private func resumeWaitingPartitions() async {
        let waiting = ingest.state.read { state in state.ledger.waitingGaps.map { ($0.topicPartition, state.ledger.storedOffsets[$0.topicPartition] ?? nil) } }
        guard !waiting.isEmpty,
              let stored = try? await awaitTask(limit: IngestService.betweenFlushesReadLimit, stopGrace: .zero, { [store] in try await store.storedOffsets(for: waiting.map(\.0)) })
        else { return }
        let moved = waiting.filter { partition, offset in stored[partition] != offset }.map(\.0)
        guard !moved.isEmpty else { return }
        logger.notice("the stored offsets of partitions waiting at a gap were reset; consuming them from there", metadata: [
            "partitions": "\(moved.map { "\($0):\(stored[$0].map(String.init) ?? "none")" }.joined(separator: ","))"])
        change { $0.mustSeekStoredOffsets(moved) }
    }

    /// When consumed events are left unflushed at the stop, says where the next start resumes: the offsets PostgreSQL
    /// stored, as this instance knows them (a partition never stored resumes where `auto.offset.reset` says).
    private func logResumeOffsets() {
        let (unflushed, stored) = ingest.state.read { ($0.ledger.hasUnflushedWork($0.ledger.assigned), $0.ledger.storedOffsets) }
        guard unflushed else { return }
        let sorted = stored.sorted { $0.key < $1.key }
        logger.warning("stopping with consumed events not flushed; the next start resumes from the offsets PostgreSQL stored", metadata: [
            "resume_offsets": "\(sorted.compactMap { partition, offset in offset.map { "\(partition):\($0)" } }.joined(separator: ","))",
            "never_stored": "\(sorted.filter { $0.value == nil }.map { $0.key.description }.joined(separator: ","))",
        ])
    }

    /// Ends the ingest after a flush hung: polling stops, the consumer leaves its group (bounded), but nothing
    /// more is written, settled or sealed (PostgreSQL does not answer, and the hung transaction may yet commit):
    /// the next start repairs the archive and consumes again from the stored offsets.
    private func stopAfterHungFlush(_ consumer: KafkaConsumer) async throws -> Never {
        await ingest.stopPollingAndWait()
        logResumeOffsets()
        _ = try? await awaitBlocking(limit: Self.leaveGroupLimit) { consumer.close() }
        ingest.consumer.withLock { $0 = nil }
        throw FlushHung(limit: configuration.flushTimeout)
    }

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
        /// The service is stopping and PostgreSQL does not answer: the write is left, the batch put back.
        case abandoned
    }

    /// Writes one batch.
    @discardableResult
    private func flushOnce(consumer: KafkaConsumer) async -> FlushOutcome {
        guard await settleArchive() else { return .failed }
        guard let (batch, flight) = change({ $0.flushStarted() }) else { return .done }
        let started = ContinuousClock.now
        var writing = false
        do {
            let now = IngestService.now()
            let segments = try archive.withLock { try $0?.append(batch.parts, now: now) } ?? []
            let rejected = batch.rejected
            if let deadLetters = deadLetters.withLock({ $0 }), !rejected.isEmpty {
                try await awaitBlocking { try deadLetters.send(rejected) }
                metrics.recordDeadLetters(rejected.count)
            }
            writing = true
            let newArtistPartitions = storedArtistPartitions.withLock { stored in batch.artistPartitions.filter { !stored.contains($0) } }.sorted { ($0.artistID, $0.topicPartition) < ($1.artistID, $1.topicPartition) }
            let funnel = try await postgresAtStop.cancellingIfUnanswered(limit: configuration.flushTimeout) { [store] in
                try await store.write(batch, archive: segments, artistPartitions: newArtistPartitions)
            }
            storedArtistPartitions.withLock { $0.formUnion(newArtistPartitions) }
            archive.withLock { $0?.committed() }
            let grown = flight.flatMap { memory?.grownByCommit(of: $0, funnel: funnel) }
            change { $0.flushCommitted(at: IngestService.now(), flight: flight, grown: grown, funnel: funnel?.artistDays) }
            FreedMemory.release()
            if configuration.commitGroupOffsets {
                consumer.commitAsync(Dictionary(uniqueKeysWithValues: batch.parts.map { ($0.topicPartition, $0.newOffset) }))
            }
            metrics.recordFlush(outcome: "committed", duration: ContinuousClock.now - started, rows: batch.rowCount)
            logger.debug("flushed", metadata: ["partitions": "\(batch.parts.count)", "duration": "\(ContinuousClock.now - started)"])
            return .done
        } catch let conflict as OffsetConflict {
            rollBackArchive()
            metrics.recordFlush(outcome: "conflict", duration: ContinuousClock.now - started, rows: 0)
            logger.warning("offset conflict; partition will be consumed again from its stored offset", metadata: ["detail": "\(conflict)"])
            change { $0.offsetConflict(batch, on: conflict.topicPartition) }
            return .done
        } catch let changed as ZonesChanged {
            // Nothing was written: the batch goes back, and its partitions are consumed again in the zones read now.
            rollBackArchive()
            metrics.recordFlush(outcome: "zones_changed", duration: ContinuousClock.now - started, rows: 0)
            logger.notice("an artist's zone changed while the batch was counted; its partitions are consumed again in the new zones",
                          metadata: ["detail": "\(changed)"])
            change { $0.flushFailed(batch) }
            do {
                try await awaitTask(limit: IngestService.betweenFlushesReadLimit, stopGrace: .zero) { try await self.ingest.loadZones() }
                return .done
            } catch {
                logger.error("cannot read the artists' zones; the batch waits for them", metadata: ["error": "\(error)"])
                return .failed
            }
        } catch is PostgresDoesNotAnswer {
            // Nothing more is written by this process; its transaction, if it began, commits or not: the next start
            // reads the offsets PostgreSQL stored either way.
            metrics.recordFlush(outcome: "abandoned", duration: ContinuousClock.now - started, rows: 0)
            logger.warning("the stop abandons the flush in flight: PostgreSQL does not answer; its events will be consumed again")
            change { $0.flushFailed(batch) }
            return .abandoned
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
            change { $0.flushFailed(batch) }
            return cutShort ? .cutShort : .failed
        }
    }
}

// MARK: - Archive

extension Flusher {
    /// Opens the archive directory and repairs what a previous process left open: each open segment is cut to the
    /// length stored with the last committed flush and sealed.
    private func openArchive() async throws {
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
    private func rollBackArchive() {
        repairArchive { try $0.rolledBack() }
    }

    /// Settles the archive frames of a flush whose write failed (`ArchiveWriter.settle`): kept if PostgreSQL stored
    /// them, so the flush had committed and only its answer was lost, cut off otherwise. False while PostgreSQL
    /// cannot say: nothing may be appended until it does.
    private static let settleLimit: Duration = .seconds(10)

    private func settleArchive() async -> Bool {
        let names = archive.withLock { $0?.unsettled ?? [] }
        guard !names.isEmpty else { return true }
        let stored: [String: Int64]
        do {
            // Bounded: a statement sent as its connection broke has been seen never to return (postgres-nio 1.33.2),
            // and this one comes right after a connection was lost; asked again on another, it answers.
            stored = try await awaitTask(limit: Self.settleLimit) { [store] in try await store.archiveSegmentLengths(names) }
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
        change { $0.mustSeekStoredOffsets(landed) }
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
    private func sealArchiveSegments() {
        let owned = Set(ingest.state.read { $0.ledger.assigned })
        do {
            try archive.withLock { try $0?.sealFinished(now: IngestService.now(), keeping: owned) }
        } catch {
            logger.error("archive: cannot seal a segment; the next start seals it", metadata: ["error": "\(error)"])
        }
    }
}
