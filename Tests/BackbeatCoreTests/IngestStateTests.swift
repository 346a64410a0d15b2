import BackbeatCore
import BackbeatTestSupport
import Testing

/// The ingest's one state through every transition (assigned, stored offsets read or not, sought or not, consumed,
/// backpressure, flush started, committed, failed, offset conflict, revoked, a gap found, a snapshot checked), with
/// what each answers the services and the changes it queues for the in-memory layers; and the layers it keeps, fed
/// only those changes, which must always hold exactly the ledger's unflushed work once the changes are applied.
@Suite struct IngestStateTests {
    static let now = RFC3339.parseTimestamp("2026-06-15T12:00:00Z")!
    static let partitions = (0..<3).map { TopicPartition(topic: "events", partition: $0) }

    /// A state with memory, with a generator of messages on every partition.
    struct Ingest {
        var state: IngestState
        var generator = EventGenerator(.init(seed: 5, artists: 5, days: 6, start: CivilDate(year: 2026, month: 6, day: 9), invalidFraction: 0.05))
        var next: [TopicPartition: Int64] = [:]

        init(pendingLimitBytes: Int = .max) {
            state = IngestState(pendingLimitBytes: pendingLimitBytes, memory: true)
        }

        /// The state's layers, as of the last change applied.
        var layers: MemoryLayers { state.layers! }

        /// Messages `count`, spread over every partition, owned or not, in offset order.
        mutating func messages(_ count: Int) -> [ConsumedMessage] {
            (0..<count).map { index in
                let partition = IngestStateTests.partitions[index % IngestStateTests.partitions.count]
                let offset = next[partition, default: 0]
                next[partition] = offset + 1
                return ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: offset), key: nil, value: generator.next().value)
            }
        }

        /// One poll of `count` messages, in runs of one partition as a fetch delivers them, then interleaved.
        mutating func poll(_ count: Int) {
            let all = messages(count).sorted { ($0.position.topicPartition, $0.position.offset) < ($1.position.topicPartition, $1.position.offset) }
            _ = state.consumed(Array(all.prefix(count / 2)), now: IngestStateTests.now)
            _ = state.consumed(all.dropFirst(count / 2).sorted { $0.position.offset < $1.position.offset }, now: IngestStateTests.now)
            applyChanges()
        }

        /// Applies the changes the state queued for its layers, one at a time as the service's queue does; answers them.
        @discardableResult
        mutating func applyChanges() -> [IngestState.MemoryChange] {
            let queued = state.queuedMemoryChanges
            for _ in queued {
                let applied = state.applyNextMemoryChange()
                #expect(applied)
            }
            let left = state.applyNextMemoryChange()
            #expect(!left, "nothing left")
            return queued
        }

        /// Installs a snapshot of `durable` at the stored offsets, owning `owned`.
        mutating func install(_ durable: CubeMemory, owned: Set<TopicPartition>, everyPartition: Bool) {
            let stored = state.ledger.storedOffsets.compactMapValues { $0 }
            let elsewhere = stored.isEmpty ? [owned.first!: 1] : stored.mapValues { $0 + 1 }
            let refused = state.installMemory(durable, readAt: elsewhere, owned: owned, everyPartition: everyPartition)
            #expect(!refused, "a snapshot read at other offsets is not installed")
            let installed = state.installMemory(durable, readAt: stored, owned: owned, everyPartition: everyPartition)
            #expect(installed)
        }

        /// `partitions` assigned by the group and owned from `stored` (the offsets PostgreSQL holds), through the
        /// whole exchange: a read of their stored offsets, then a seek.
        mutating func own(_ partitions: [TopicPartition], stored: [TopicPartition: Int64] = [:]) throws {
            state.assigned(partitions)
            let planned = state.nextStoredOffsetRead()
            let read = try #require(planned).read
            #expect(read.partitions == partitions.sorted())
            state.storedOffsetsRead(read, stored)
            let seeks = state.takeSeeks()
            #expect(seeks.count == 1)
            for seek in seeks { state.sought(seek) }
            applyChanges()
        }

        mutating func revoke(_ partitions: [TopicPartition]) {
            _ = state.revoked(partitions, lost: false)
            applyChanges()
        }

        /// Takes a batch and starts its flush: the flight's cubes are the batch's.
        mutating func startFlush() throws -> (FlushBatch, MemoryLayers.Flight) {
            let queued = state.queuedMemoryChanges.count
            let taken = state.flushStarted()
            let (batch, started) = try #require(taken)
            let flight = try #require(started, "a flush's start moves the pending layer in flight")
            #expect(queued == 0 || state.queuedMemoryChanges.isEmpty, "a flush's start applies what was queued first")
            let same = Cells([flight.layer]) == Cells(batch.mergedDelta)
            #expect(same, "a flush's cubes are its batch's")
            return (batch, flight)
        }

        mutating func commit(_ batch: FlushBatch, _ flight: MemoryLayers.Flight) {
            state.flushCommitted(at: IngestStateTests.now, flight: flight, grown: layers.commit(of: flight.epoch)?.grown())
            #expect(layers.inFlight == nil)
        }

        mutating func fail(_ batch: FlushBatch) {
            state.flushFailed(batch)
            applyChanges()
            #expect(layers.inFlight == nil)
        }

        /// The pending cubes are the cubes of the ledger's unflushed work.
        func expectPendingIsTheLedgersWork(_ comment: Comment) {
            var probe = state.ledger
            let unflushed = probe.takeBatch()?.mergedDelta ?? InternedDelta()
            let same = Cells([layers.pending]) == Cells(unflushed)
            #expect(same, comment)
            #expect(!unflushed.streams.isEmpty, comment)
        }
    }

    typealias Cells = MemoryLayersTests.Cells

    /// Every transition of a live ingest, the layers fed only the state's changes: after each one, the pending cubes
    /// are exactly those of the ledger's unflushed work, a flush's cubes exactly those of its batch, the durable layer
    /// exactly what the committed flushes wrote since a snapshot was installed, and `covers` only the partitions
    /// owned without a break since.
    @Test func theLayersFedTheStatesChangesAreAlwaysTheLedgersWork() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own(p)
        ingest.poll(300)
        ingest.expectPendingIsTheLedgersWork("consumed")
        #expect(!ingest.layers.complete)

        // A snapshot installed while nothing is in flight: complete, pending kept as it was.
        #expect(!ingest.layers.covers([]), "nothing installed yet")
        ingest.install(CubeMemory(), owned: Set(p), everyPartition: true)
        #expect(ingest.layers.complete && ingest.layers.covers(Set(p)) && ingest.layers.covers([]))
        ingest.expectPendingIsTheLedgersWork("installed")

        // A flush that commits: its cubes join the durable layer; what was consumed meanwhile stays pending.
        let (first, firstFlight) = try ingest.startFlush()
        #expect(ingest.layers.pending.dayRange == nil)
        ingest.poll(200)
        ingest.expectPendingIsTheLedgersWork("consumed while a flush is in flight")
        ingest.commit(first, firstFlight)
        var durable = first.mergedDelta
        #expect(Cells([ingest.layers.durable]) == Cells(durable))

        // A flush that fails and is taken back whole: its cubes are pending again, ahead of what came since.
        let (second, _) = try ingest.startFlush()
        ingest.poll(200)
        ingest.fail(second)
        ingest.expectPendingIsTheLedgersWork("failed flush taken back whole")
        #expect(ingest.layers.complete, "a failed flush changes no ownership")

        // A flush that fails while partition 2 is revoked: the ledger takes back partitions 0 and 1 only.
        let (third, _) = try ingest.startFlush()
        ingest.poll(200)
        ingest.revoke([p[2]])
        #expect(!ingest.layers.complete && !ingest.layers.covers([p[2]]) && ingest.layers.covers([p[0], p[1]]))
        ingest.expectPendingIsTheLedgersWork("revoked during a flight")
        ingest.fail(third)
        ingest.expectPendingIsTheLedgersWork("failed flush, one partition revoked")

        // An offset conflict on partition 1: the batch goes back and the partition waits for its stored offset.
        let (fourth, _) = try ingest.startFlush()
        ingest.poll(150)
        ingest.state.offsetConflict(fourth, on: p[1])
        ingest.applyChanges()
        ingest.expectPendingIsTheLedgersWork("offset conflict")
        #expect(!ingest.state.ledger.owns(p[1]))

        // Partitions owned again with nothing unflushed: pending stays as it is.
        try ingest.own([p[1], p[2]], stored: [p[1]: first.parts[1].newOffset, p[2]: first.parts[2].newOffset])
        ingest.expectPendingIsTheLedgersWork("assigned")
        ingest.poll(300)
        ingest.expectPendingIsTheLedgersWork("reassigned")
        #expect(!ingest.layers.covers([p[1]]) && !ingest.layers.covers([p[2]]) && ingest.layers.covers([p[0]]))

        // Complete again from a snapshot (here, what the flushes wrote); a flush that commits after a revocation
        // during its flight is durable for all its partitions: it grows the durable layer, and the revoked
        // partition is no longer covered.
        ingest.install(ingest.layers.durable, owned: Set(p), everyPartition: true)
        let (fifth, fifthFlight) = try ingest.startFlush()
        ingest.revoke([p[0]])
        ingest.commit(fifth, fifthFlight)
        durable.merge(fifth.mergedDelta)
        #expect(Cells([ingest.layers.durable]) == Cells(durable))
        #expect(!ingest.layers.complete && !ingest.layers.covers([p[0]]) && ingest.layers.covers([p[1], p[2]]))

        // A snapshot installed while owning part of the partitions covers those only; the next commit grows it.
        try ingest.own([p[0]], stored: [p[0]: try #require(fifth.parts.first { $0.topicPartition == p[0] }).newOffset])
        ingest.poll(300)
        ingest.revoke([p[2]])
        let partial = ingest.state.installMemory(CubeMemory(), readAt: [:], owned: [p[0]], everyPartition: false)
        #expect(!partial, "owning more than the snapshot")
        ingest.install(ingest.layers.durable, owned: [p[0], p[1]], everyPartition: false)
        #expect(!ingest.layers.complete && ingest.layers.covers([p[0], p[1]]) && !ingest.layers.covers([p[2]]))
        #expect(!ingest.layers.covers([]), "an artist of no known partition is covered only when memory is complete")
        let (sixth, sixthFlight) = try ingest.startFlush()
        ingest.commit(sixth, sixthFlight)
        durable.merge(sixth.mergedDelta)
        #expect(Cells([ingest.layers.durable]) == Cells(durable))
        #expect(ingest.layers.isIdle)
        #expect(ingest.state.flushesCommitted == 3, "three flushes committed")
    }

    /// The rebuild rule: a change of ownership rebuilds the pending layer exactly when it drops unflushed work.
    @Test func onlyAChangeThatDropsUnflushedWorkRebuildsThePendingLayer() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own([p[0], p[1]])
        #expect(ingest.state.queuedMemoryChanges.isEmpty, "applied by own")

        ingest.state.assigned([p[2]])
        let taken1 = ingest.applyChanges().only

        guard case .ownershipChanged(let assigned, let rebuilt) = try #require(taken1) else {
            Issue.record("an assignment changes ownership")
            return
        }
        #expect(assigned == [p[2]] && rebuilt == nil, "nothing of p2 was unflushed")

        _ = ingest.state.consumed(ingest.messages(30), now: Self.now)
        let taken2 = ingest.applyChanges().only

        guard case .consumed(let polled) = try #require(taken2) else {
            Issue.record("a poll's deltas go to the layers")
            return
        }
        #expect(Set(polled.keys) == [p[0], p[1]], "p2 waits for its stored offset: its messages are ignored")

        #expect(ingest.state.revoked([p[1]], lost: false) == .unflushed)
        let taken3 = ingest.applyChanges().only

        guard case .ownershipChanged(let revoked, let left) = try #require(taken3) else {
            Issue.record("a revocation changes ownership")
            return
        }
        #expect(revoked == [p[1]])
        let work = try #require(left, "p1's unflushed work was dropped: pending is rebuilt")
        var probe = ingest.state.ledger
        let left0 = probe.takeBatch()
        let remaining = try #require(left0).mergedDelta
        #expect(Cells(work.reduce(into: InternedDelta()) { $0.merge($1) }) == Cells(remaining), "from p0's work alone")

        #expect(ingest.state.revoked([p[2]], lost: true) == .lost)
        let taken4 = ingest.applyChanges().only

        guard case .ownershipChanged(_, let none) = try #require(taken4) else {
            Issue.record("a revocation changes ownership")
            return
        }
        #expect(none == nil, "p2 held nothing unflushed")
        #expect(ingest.state.revoked([p[2]], lost: false) == .flushed)

        // Without memory, nothing is queued.
        var plain = IngestState()
        plain.assigned([p[0]])
        #expect(plain.queuedMemoryChanges.isEmpty && plain.layers == nil)
    }

    /// A change that rebuilds the pending layer can have the layer made apart (outside the service's lock): the
    /// layer made is applied when it was made for the oldest change queued, and ignored (the change rebuilds it
    /// itself) when that change was applied meanwhile.
    @Test func aRebuildMadeApartIsAppliedOnlyForTheOldestChange() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own(p)
        ingest.poll(300)
        let queuedPoll = ingest.state.nextMemoryRebuild().map { _ in true }
        #expect(queuedPoll == nil, "nothing queued rebuilds")

        _ = ingest.state.revoked([p[2]], lost: false)
        let first = try #require(ingest.state.nextMemoryRebuild())
        let stale = ingest.state.applyNextMemoryChange(rebuilt: (first.sequence + 1, MemoryLayers.Rebuilt(from: [])))
        #expect(stale)
        ingest.expectPendingIsTheLedgersWork("a layer made for another change is ignored")

        _ = ingest.state.revoked([p[1]], lost: false)
        let second = try #require(ingest.state.nextMemoryRebuild())
        #expect(second.sequence == first.sequence + 1)
        let made = ingest.state.applyNextMemoryChange(rebuilt: (second.sequence, MemoryLayers.Rebuilt(from: second.unflushed)))
        #expect(made)
        ingest.expectPendingIsTheLedgersWork("the layer made apart")

        // The layer made apart is the one applied (made from nothing here, it leaves pending empty).
        ingest.poll(60)
        _ = ingest.state.revoked([p[0]], lost: false)
        let third = try #require(ingest.state.nextMemoryRebuild())
        let planted = ingest.state.applyNextMemoryChange(rebuilt: (third.sequence, MemoryLayers.Rebuilt(from: [])))
        #expect(planted && ingest.layers.pending.dayRange == nil)
    }

    /// The layers apply the queued changes in the state's order, one at a time, whenever the queue's jobs run: a
    /// flush's start and an install apply what is still queued first, so a flight is exactly its batch and an install
    /// is never undone by an older change.
    @Test func queuedChangesApplyInOrderAndBeforeAFlushOrAnInstall() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own(p)
        ingest.install(CubeMemory(), owned: Set(p), everyPartition: true)
        for _ in 0..<3 {
            _ = ingest.state.consumed(ingest.messages(60), now: Self.now)
        }
        #expect(ingest.state.queuedMemoryChanges.count == 3)
        #expect(ingest.layers.pending.dayRange == nil, "nothing applied yet")
        let applied = ingest.state.applyNextMemoryChange()
        #expect(applied && ingest.state.queuedMemoryChanges.count == 2)
        #expect(ingest.layers.pending.dayRange != nil, "the oldest poll applied")
        let (batch, _) = try ingest.startFlush()
        #expect(ingest.state.queuedMemoryChanges.isEmpty)
        _ = ingest.state.consumed(ingest.messages(60), now: Self.now)
        ingest.state.flushFailed(batch)
        ingest.applyChanges()
        ingest.expectPendingIsTheLedgersWork("failed while a poll was queued: the flight returns ahead of it")

        // A revocation queued before an install is applied before it: the install's loaded partitions stay.
        ingest.revoke([p[2]])
        ingest.state.assigned([p[2]])
        ingest.state.mustSeekStoredOffsets([])
        ingest.state.revoked([p[2]], lost: false)
        #expect(!ingest.state.queuedMemoryChanges.isEmpty)
        ingest.install(ingest.layers.durable, owned: [p[0], p[1]], everyPartition: false)
        #expect(ingest.state.queuedMemoryChanges.isEmpty)
        #expect(ingest.layers.covers([p[0], p[1]]), "the install comes after the older changes")
    }

    /// Zones read anew while work is unflushed: what was counted in the old zones is dropped with its partitions, which
    /// are consumed again from their stored offsets; the batches after carry the new zones' generation, which PostgreSQL
    /// checks (`ZonesChanged`). The same zones read again change nothing.
    @Test func aChangeOfZonesConsumesTheUnflushedPartitionsAgain() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own(p)
        ingest.install(CubeMemory(), owned: Set(p), everyPartition: true)
        ingest.poll(300)
        let (first, firstFlight) = try ingest.startFlush()
        ingest.commit(first, firstFlight)
        #expect(first.zonesGeneration == 0)
        ingest.poll(200)
        #expect(ingest.state.ledger.hasUnflushedWork(p))

        let zones = ArtistZones(["artist-0001": try ZoneRulesTests.rules("Asia/Kathmandu")], generation: 7)
        ingest.state.zonesChanged(zones)
        ingest.applyChanges()
        #expect(ingest.state.ledger.assigned.isEmpty, "every partition had unflushed work: all are consumed again")
        #expect(!ingest.state.ledger.hasUnflushedWork(p))
        #expect(Cells([ingest.layers.pending]) == Cells(InternedDelta()), "what was counted in the old zones is dropped")
        #expect(ingest.state.ledger.zones == zones)

        ingest.next = Dictionary(uniqueKeysWithValues: first.parts.map { ($0.topicPartition, $0.newOffset) })
        try ingest.own(p, stored: ingest.next)
        ingest.poll(100)
        ingest.state.zonesChanged(zones)
        #expect(ingest.state.ledger.assigned == p.sorted(), "the same zones: nothing consumed again")
        let (second, _) = try ingest.startFlush()
        #expect(second.zonesGeneration == 7)
        #expect(second.parts.map(\.expectedOffset) == first.parts.map(\.newOffset), "consumed again from the stored offsets")
    }

    /// An assignment's way to ownership: a read of the stored offsets (retried a moment later after a failure), a
    /// seek, and only then are the partition's messages counted, from the stored offset on.
    @Test func assignedPartitionsAreOwnedOnceTheirStoredOffsetsAreReadAndSought() throws {
        let p = Self.partitions
        var state = IngestState()
        state.assigned([p[0], p[1]])
        let taken5 = state.nextStoredOffsetRead()

        let first = try #require(taken5)
        #expect(first.read.partitions == [p[0], p[1]] && !first.afterFailure)
        #expect(state.nextStoredOffsetRead() == nil, "one read at a time for the same partitions")

        // The read fails: the next one comes after a delay, and nothing is sought.
        state.storedOffsetsRead(first.read, nil)
        #expect(state.takeSeeks().isEmpty)
        let taken6 = state.nextStoredOffsetRead()

        let second = try #require(taken6)
        #expect(second.read.partitions == [p[0], p[1]] && second.afterFailure)

        // Read; p1 revoked meanwhile: only p0 is sought.
        state.storedOffsetsRead(second.read, [p[0]: 40])
        _ = state.revoked([p[1]], lost: false)
        let seeks = state.takeSeeks()
        #expect(seeks == [IngestState.Seek(read: second.read, offsets: [p[0]: 40])])
        #expect(state.takeSeeks().isEmpty, "taken once")

        // The seek fails: p0 waits for a new read, after a delay.
        state.seekFailed(seeks[0])
        #expect(!state.ledger.owns(p[0]))
        let taken7 = state.nextStoredOffsetRead()

        let third = try #require(taken7)
        #expect(third.read.partitions == [p[0]] && third.afterFailure)

        // A position the broker refused, whose log offsets could not be read either: the next read waits too.
        state.storedOffsetsRead(third.read, [:])
        state.mustSeekStoredOffsets([p[0]], afterFailure: true)
        let retried = state.nextStoredOffsetRead()
        #expect(try #require(retried).afterFailure)
        state.mustSeekStoredOffsets([p[0]])
        let plain = state.nextStoredOffsetRead()
        #expect(try #require(plain).afterFailure == false, "after no failure, at once")

        // Read and sought: owned from the stored offset; a message below it is ignored, the next one counted.
        state.storedOffsetsRead(third.read, [:])
        state.assigned([p[0]])
        #expect(state.takeSeeks().isEmpty, "assigned again since: the read is stale, a new one is needed")
        let taken8 = state.nextStoredOffsetRead()

        let fourth = try #require(taken8)
        #expect(!fourth.afterFailure)
        state.storedOffsetsRead(fourth.read, [p[0]: 40])
        let taken9 = state.takeSeeks().only

        let owned = try #require(taken9).offsets
        #expect(owned == [p[0]: 40])
        #expect(state.sought(IngestState.Seek(read: fourth.read, offsets: owned)) == [p[0]])
        #expect(state.ledger.storedOffsets == [p[0]: 40])
        var outcomes: [IngestLedger.Outcome] = []
        let message = { (offset: Int64) in
            ConsumedMessage(position: MessagePosition(topicPartition: p[0], offset: offset), key: nil,
                            value: Array(#"{"event_id":"e","type":"social","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","platform":"x","action":"like"}"#.utf8))
        }
        let resumptions = state.consumed([message(39), message(40)], now: Self.now, outcome: { outcomes.append($1) })
        #expect(outcomes == [.ignored, .accepted])
        #expect(resumptions.isEmpty, "messages without a Kafka timestamp are not measured")
        #expect(IngestTotals.sum(state.topicTotals.values).accepted == 1 && IngestTotals.sum(state.topicTotals.values).rejected == 0)
    }

    /// Backpressure pauses every owned partition over the limit (again on each poll while paused), stays paused until
    /// unflushed work is under half of it, and changes state only once the consumer did as asked.
    @Test func backpressurePausesOverTheLimitAndResumesUnderHalf() throws {
        let p = Self.partitions
        var probe = Ingest()
        try probe.own(p)
        probe.poll(300)
        let bytes = probe.state.ledger.pendingBytes
        // Over the limit by a little: dropping a third of the work brings it under the limit, not under half.
        var ingest = Ingest(pendingLimitBytes: bytes - 1)
        try ingest.own(p)
        #expect(ingest.state.backpressure() == nil)
        ingest.poll(300)
        let asked = ingest.state.backpressure()
        let pause = try #require(asked)
        #expect(pause == .pause(p))
        #expect(ingest.state.pendingBytes == bytes && !ingest.state.paused, "not paused until the consumer paused")
        let paused = ingest.state.backpressureApplied(pause)
        #expect(paused && ingest.state.paused)
        #expect(ingest.state.backpressure() == .pause(p), "asked again, for partitions assigned meanwhile")
        let again = ingest.state.backpressureApplied(.pause(p))
        #expect(!again, "no change")

        ingest.revoke([p[2]])
        #expect(ingest.state.backpressure() == .pause([p[0], p[1]]), "under the limit, over half of it: still paused")
        #expect(ingest.state.pendingBytes < bytes - 1 && ingest.state.pendingBytes > (bytes - 1) / 2)

        let (batch, flight) = try ingest.startFlush()
        #expect(ingest.state.pendingBytes == 0, "a batch taken no longer counts")
        ingest.commit(batch, flight)
        let askedAgain = ingest.state.backpressure()
        let resume = try #require(askedAgain)
        #expect(resume == .resume([p[0], p[1]]))
        let resumed = ingest.state.backpressureApplied(resume)
        #expect(resumed && !ingest.state.paused)
        #expect(ingest.state.backpressure() == nil)
    }

    /// A gap is noted once for the next flush and among the recent ones (the latest `recentGapLimit`).
    @Test func gapsAreNotedOnceAndTheRecentOnesKept() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own([p[0]], stored: [p[0]: 10])
        let gap = OffsetGap(topicPartition: p[0], firstMissing: 10, logStart: 500, logEnd: 900, detectedAt: Self.now, resumedAt: 500)
        let found = ingest.state.gapFound(gap)
        #expect(found)
        let foundAgain = ingest.state.gapFound(gap)
        #expect(!foundAgain, "reported again before fetching restarted")
        #expect(ingest.state.recentGaps == [gap])
        let notOwned = OffsetGap(topicPartition: p[1], firstMissing: 0, logStart: 5, logEnd: 9, detectedAt: Self.now, resumedAt: 5)
        #expect(!ingest.state.gapFound(notOwned) && ingest.state.recentGaps == [gap])
        let started = ingest.state.flushStarted()
        let batch = try #require(started).batch
        #expect(batch.parts[0].gaps == [gap] && batch.parts[0].newOffset == 500)
        ingest.state.flushCommitted(at: IngestStateTests.now)

        for offset in 0..<Int64(IngestState.recentGapLimit + 5) {
            let later = OffsetGap(topicPartition: p[0], firstMissing: 500 + offset * 10, logStart: 505 + offset * 10, logEnd: 2000,
                                  detectedAt: Self.now, resumedAt: 505 + offset * 10)
            let noted = ingest.state.gapFound(later)
            #expect(noted)
        }
        #expect(ingest.state.recentGaps.count == IngestState.recentGapLimit)
        #expect(ingest.state.recentGaps.last?.firstMissing == 500 + Int64(IngestState.recentGapLimit + 4) * 10)
    }

    /// A snapshot is installed only while the owned partitions stand exactly at its offsets.
    @Test func aSnapshotFitsOnlyTheOffsetsItWasReadAt() throws {
        let p = Self.partitions
        var ingest = Ingest()
        try ingest.own([p[0], p[1]], stored: [p[0]: 0, p[1]: 0])
        #expect(ingest.state.standsAt([p[0]: 0, p[1]: 0], owning: [p[0], p[1]]))
        #expect(!ingest.state.standsAt([p[0]: 0, p[1]: 0], owning: [p[0], p[1], p[2]]), "owning other partitions")
        ingest.poll(30)
        let started = ingest.state.flushStarted()
        let batch = try #require(started).batch
        #expect(!ingest.state.standsAt([p[0]: 0, p[1]: 0], owning: [p[0], p[1]]), "a flush moved the offsets")
        ingest.state.flushFailed(batch)
        #expect(ingest.state.standsAt([p[0]: 0, p[1]: 0], owning: [p[0], p[1]]), "put back")
        ingest.state.partitionsListed(Set(p))
        #expect(ingest.state.allPartitions == Set(p))
    }
}

extension Array {
    /// The one element, or nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
