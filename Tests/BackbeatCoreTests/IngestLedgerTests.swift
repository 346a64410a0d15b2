import BackbeatCore
import BackbeatTestSupport
import Testing

/// The exactly-once bookkeeping: ownership, offsets, batches, failed and conflicting flushes.
@Suite struct IngestLedgerTests {
    let partition = TopicPartition(topic: "streams", partition: 3)
    let now = RFC3339.parseTimestamp("2026-06-15T12:00:00Z")!

    func message(_ offset: Int64, valid: Bool = true) -> ConsumedMessage {
        let json = #"{"event_id":"e\#(offset)","type":"social","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","platform":"x","action":"like"}"#
        return ConsumedMessage(
            position: MessagePosition(topicPartition: partition, offset: offset), key: nil,
            value: valid ? Array(json.utf8) : Array("{".utf8))
    }

    @Test func ignoresPartitionsNotOwned() {
        var ledger = IngestLedger()
        do {
            let outcome = ledger.ingest(message(0), now: now)
            #expect(outcome == .ignored)
        }
        let none = ledger.takeBatch()
        #expect(none == nil)
    }

    @Test func batchCarriesOffsetsAndDeltas() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 10)
        #expect(ledger.ingest(message(9), now: now) == .ignored)  // already stored
        do {
            let outcome = ledger.ingest(message(10), now: now)
            #expect(outcome == .accepted)
        }
        do {
            let outcome = ledger.ingest(message(11, valid: false), now: now)
            #expect(outcome == .rejected(.invalidJSON))
        }
        #expect(ledger.ingest(message(11), now: now) == .ignored)  // redelivery of a consumed offset
        do {
            let outcome = ledger.ingest(message(12), now: now)
            #expect(outcome == .accepted)
        }
        let taken_batch = ledger.takeBatch()
        let batch = try #require(taken_batch)
        #expect(batch.parts.count == 1)
        #expect(batch.parts[0].expectedOffset == 10)
        #expect(batch.parts[0].newOffset == 13)
        #expect(batch.mergedDelta.social.values.reduce(0, +) == 2)
        #expect(batch.mergedDelta.rejected.map(\.position.offset) == [11])
        let none = ledger.takeBatch()
        #expect(none == nil)

        do {
            let outcome = ledger.ingest(message(13), now: now)
            #expect(outcome == .accepted)
        }
        let taken_next = ledger.takeBatch()
        let next = try #require(taken_next)
        #expect(next.parts[0].expectedOffset == 13)
        #expect(next.parts[0].newOffset == 14)
    }

    @Test func failedFlushIsRestoredAndMergedWithNewerWork() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: nil)
        ledger.ingest(message(0), now: now)
        let taken_failed = ledger.takeBatch()
        let failed = try #require(taken_failed)
        ledger.ingest(message(1), now: now)
        ledger.restore(failed)
        let taken_retry = ledger.takeBatch()
        let retry = try #require(taken_retry)
        #expect(retry.parts[0].expectedOffset == nil)
        #expect(retry.parts[0].newOffset == 2)
        #expect(retry.mergedDelta.social.values.reduce(0, +) == 2)
    }

    @Test func restoreSkipsPartitionsReassignedMeanwhile() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 0)
        ledger.ingest(message(0), now: now)
        let taken_failed = ledger.takeBatch()
        let failed = try #require(taken_failed)
        ledger.revoke(partition)
        ledger.assign(partition, storedOffset: 5)
        ledger.restore(failed)
        let none = ledger.takeBatch()
        #expect(none == nil)
        ledger.ingest(message(5), now: now)
        let later = ledger.takeBatch()
        #expect(later?.parts[0].expectedOffset == 5)
    }

    @Test func conflictDropsThePartitionUntilSoughtAgain() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 0)
        ledger.ingest(message(0), now: now)
        let taken_batch = ledger.takeBatch()
        let batch = try #require(taken_batch)
        ledger.restore(batch)
        ledger.markStale(partition)
        do {
            let outcome = ledger.ingest(message(1), now: now)
            #expect(outcome == .ignored)
        }
        let none = ledger.takeBatch()
        #expect(none == nil)
        let taken1 = ledger.takeStale()
        let read = try #require(taken1)
        #expect(read.partitions == [partition] && ledger.isReading(partition, for: read))
        let again = ledger.takeStale()
        #expect(again == nil)
        ledger.assign(partition, storedOffset: 7)
        #expect(!ledger.isReading(partition, for: read))
        do {
            let outcome = ledger.ingest(message(7), now: now)
            #expect(outcome == .accepted)
        }
    }

    /// An assigned partition waits for a read of its stored offset; a read that fails is followed by another, and a
    /// read that a revocation or a newer read overtook is not used.
    @Test func storedOffsetReadsAreUsedOnlyByThePartitionsStillWaitingForThem() throws {
        var ledger = IngestLedger()
        let other = TopicPartition(topic: "streams", partition: 9)
        ledger.markStale(partition)
        ledger.markStale(other)
        do {
            let outcome = ledger.ingest(message(0), now: now)
            #expect(outcome == .ignored, "not owned until its stored offset is read")
        }
        let taken2 = ledger.takeStale()
        let first = try #require(taken2)
        #expect(first.partitions == [partition, other].sorted())
        ledger.readFailed(first)
        #expect(!ledger.isReading(partition, for: first))
        let taken3 = ledger.takeStale()
        let second = try #require(taken3, "a failed read is made again")
        #expect(second.partitions == first.partitions && second.id != first.id)
        ledger.revoke(other)
        #expect(ledger.isReading(partition, for: second) && !ledger.isReading(other, for: second))
        ledger.markStale(partition)
        #expect(!ledger.isReading(partition, for: second), "marked stale again: a newer read is needed")
        let taken4 = ledger.takeStale()
        let third = try #require(taken4)
        #expect(third.partitions == [partition])
        ledger.readFailed(second)
        #expect(ledger.isReading(partition, for: third), "an older read's failure leaves the newer one alone")
        ledger.assign(partition, storedOffset: 0)
        let none = ledger.takeStale()
        #expect(none == nil && ledger.assigned == [partition])
    }

    /// Each partition interns its own values, and a failed batch goes back under newer work interned apart: the
    /// batches taken still hold exactly what the accepted events add, cells and listener sketches alike, and each
    /// event only once.
    @Test func batchesHoldExactlyTheAcceptedEventsAcrossPartitionsAndRestores() throws {
        let start = CivilDate(year: 2026, month: 6, day: 1)
        var generator = EventGenerator(.init(seed: 7, artists: 6, days: 10, start: start, invalidFraction: 0.05))
        let partitions = (0..<3).map { TopicPartition(topic: "events", partition: $0) }
        var ledger = IngestLedger()
        for partition in partitions { ledger.assign(partition, storedOffset: nil) }
        var next = [TopicPartition: Int64]()
        var accepted = RollupDelta()
        var rejected = 0
        func consume(_ count: Int) {
            for index in 0..<count {
                let partition = partitions[index % partitions.count]
                let offset = next[partition, default: 0]
                next[partition] = offset + 1
                let message = ConsumedMessage(
                    position: MessagePosition(topicPartition: partition, offset: offset), key: nil, value: generator.next().value)
                let outcome = ledger.ingest(message, now: now, onAccepted: { accepted.add($0.event(in: $1)) })
                if case .rejected = outcome { rejected += 1 }
                // A redelivery of what was just consumed is not counted again.
                #expect(ledger.ingest(message, now: now) == .ignored)
            }
        }

        consume(600)
        let taken_failed = ledger.takeBatch()
        let failed = try #require(taken_failed)
        consume(900)
        ledger.restore(failed)
        let taken_retried = ledger.takeBatch()
        let retried = try #require(taken_retried)
        consume(300)
        let taken_last = ledger.takeBatch()
        let last = try #require(taken_last)

        #expect(retried.parts.map(\.expectedOffset) == [nil, nil, nil])
        #expect(last.parts.map(\.expectedOffset) == [500, 500, 500])
        var taken = retried.mergedDelta
        taken.merge(last.mergedDelta)
        let written = taken.rollupDelta
        #expect(written.streams == accepted.streams && written.revenue == accepted.revenue && written.social == accepted.social)
        #expect(written.artistListeners == accepted.artistListeners && written.trackListeners == accepted.trackListeners)
        #expect(!accepted.streams.isEmpty && !accepted.trackListeners.isEmpty)
        #expect(written.rejected.count == rejected && rejected > 0)
        #expect(retried.rowCount + last.rowCount >= written.streams.count + written.revenue.count + written.social.count)
    }

    @Test func revokeDropsUnflushedWork() {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 0)
        ledger.ingest(message(0), now: now)
        ledger.revoke(partition)
        let none = ledger.takeBatch()
        #expect(none == nil)
        #expect(ledger.pendingRowCount == 0)
    }

    @Test func aResumedGapMovesThePositionAndTravelsWithTheOffsetMove() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 10)
        let first = ledger.ingest(message(10), now: now)
        #expect(first == .accepted)
        let gap = OffsetGap(topicPartition: partition, firstMissing: 11, logStart: 500, logEnd: 900, detectedAt: now, resumedAt: 500)
        let recorded = ledger.recordGap(gap)
        #expect(recorded)
        let again = ledger.recordGap(gap)
        #expect(!again, "the same gap reported twice before fetching restarts is noted once")
        #expect(ledger.hasUnflushedWork([partition]))
        let belowStart = ledger.ingest(message(12), now: now)
        #expect(belowStart == .ignored, "below the log start: never delivered, never counted")
        let taken = ledger.takeBatch()
        let failed = try #require(taken)
        #expect(failed.parts[0].newOffset == 500)
        #expect(failed.parts[0].gaps == [gap])
        ledger.restore(failed)
        let retaken = ledger.takeBatch()
        let batch = try #require(retaken, "a failed flush puts the gap back with its offset move")
        #expect(batch.parts[0].expectedOffset == 10)
        #expect(batch.parts[0].newOffset == 500)
        #expect(batch.parts[0].gaps == [gap])
        #expect(gap.lastMissing == 499 && gap.missingCount == 489)
        let none = ledger.takeBatch()
        #expect(none == nil)
    }

    @Test func aWaitingGapIsStoredWithoutMovingTheOffsetAndHoldsThePartition() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 10)
        let gap = OffsetGap(topicPartition: partition, firstMissing: 10, logStart: 500, logEnd: 900, detectedAt: now, resumedAt: nil)
        let recorded = ledger.recordGap(gap)
        #expect(recorded)
        let again = ledger.recordGap(gap)
        #expect(!again, "a partition waits at one gap at a time")
        #expect(ledger.waitingGaps == [gap])
        let taken = ledger.takeBatch()
        let batch = try #require(taken)
        #expect(batch.parts[0].expectedOffset == 10)
        #expect(batch.parts[0].newOffset == 10)
        #expect(batch.parts[0].gaps == [gap])
        let none = ledger.takeBatch()
        #expect(none == nil)
        #expect(ledger.waitingGaps == [gap], "it waits until sought again from a stored offset an operator moved")
        ledger.markStale(partition)
        ledger.assign(partition, storedOffset: 500)
        #expect(ledger.waitingGaps.isEmpty)
        let past = OffsetGap(topicPartition: partition, firstMissing: 2_000, logStart: 0, logEnd: 900, detectedAt: now, resumedAt: nil)
        #expect(past.lastMissing == nil && past.missingCount == nil && !past.isDeletedRange)
        let notOwned = ledger.recordGap(OffsetGap(topicPartition: TopicPartition(topic: "x", partition: 0), firstMissing: 0, logStart: 1, logEnd: 2, detectedAt: now, resumedAt: 1))
        #expect(!notOwned, "a partition not owned takes no gap")
    }

    @Test func storedOffsetTrailCountsUnflushedOffsetsAndTheirAge() throws {
        var ledger = IngestLedger()
        ledger.assign(partition, storedOffset: 10)
        #expect(ledger.storedOffsetTrail[partition]?.messages == 0)
        ledger.ingest(message(10), now: now)
        ledger.ingest(message(11), now: Timestamp(microseconds: now.microseconds + 5_000_000))
        #expect(ledger.storedOffsetTrail[partition]?.messages == 2)
        #expect(ledger.storedOffsetTrail[partition]?.since == now)
        _ = ledger.takeBatch()
        #expect(ledger.storedOffsetTrail[partition]?.messages == 0)
        #expect(ledger.storedOffsetTrail[partition]?.since == nil)
    }

    @Test func theFirstMessageAfterEachAssignmentTellsHowLongThePartitionWaited() throws {
        var ledger = IngestLedger()
        func stamped(_ offset: Int64, secondsBeforeNow: Int64) -> ConsumedMessage {
            var consumed = message(offset)
            consumed.timestampMilliseconds = now.microseconds / 1000 - secondsBeforeNow * 1000
            return consumed
        }
        _ = ledger.consume([stamped(9, secondsBeforeNow: 30)], now: now)
        #expect(ledger.takeResumptions().isEmpty, "a partition not owned does not resume")
        ledger.assign(partition, storedOffset: 10)
        _ = ledger.consume([stamped(9, secondsBeforeNow: 40), stamped(10, secondsBeforeNow: 12), stamped(11, secondsBeforeNow: 1)], now: now)
        let first = ledger.takeResumptions()
        #expect(first.map(\.position.offset) == [10], "the first message consumed, not one already stored")
        #expect(first.first?.waited == .seconds(12))
        _ = ledger.consume([stamped(12, secondsBeforeNow: 0)], now: now)
        #expect(ledger.takeResumptions().isEmpty, "once per assignment")
        ledger.revoke(partition)
        ledger.assign(partition, storedOffset: 13)
        _ = ledger.consume([stamped(13, secondsBeforeNow: -3)], now: now)
        #expect(ledger.takeResumptions().map(\.waited) == [.zero], "a clock ahead of ours counts as no wait")
    }
}
