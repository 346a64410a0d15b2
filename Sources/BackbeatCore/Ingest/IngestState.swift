/// The live ingest's one state, kept pure so that every transition is tested without Kafka or PostgreSQL: the ledger
/// of owned partitions (`IngestLedger`), the in-memory cubes (`MemoryLayers`), the stored offsets read for partitions
/// just assigned, backpressure, the partitions of the subscribed topics, the gaps found, the running totals and when
/// the last flush committed.
///
/// The services hold it behind one lock and only run what its transitions answer, outside the lock: seek these
/// partitions, pause or resume those, read stored offsets, write this batch. A transition that changes what the
/// layers hold queues the change (`MemoryChange`) rather than applying it, so that the polling thread hands a poll's
/// deltas over and polls on while another thread adds them up (`applyNextMemoryChange`, one change at a time, in the
/// state's order); a flush's start and a snapshot's install apply what is queued first. Queries read the layers as of
/// the last change applied, and never an event in two layers. The state also decides the one rule the layers depend
/// on: a change that drops unflushed work (a partition revoked, reassigned or stale with work pending, a failed batch
/// not taken back whole) rebuilds the pending layer from the work left; any other change does not.
public struct IngestState: Sendable {
    /// The book of owned partitions: what each consumed since its last durable flush.
    public private(set) var ledger: IngestLedger
    /// Unflushed bytes (`IngestLedger.pendingBytes`) beyond which consumption pauses until flushes bring them under half.
    public let pendingLimitBytes: Int
    /// Whether consumption is paused because unflushed work went over `pendingLimitBytes`.
    public private(set) var paused = false
    /// `IngestLedger.pendingBytes` as of the last poll or the last batch a flush took.
    public private(set) var pendingBytes = 0
    /// Every partition of the subscribed topics as last listed (nil: unknown).
    public private(set) var allPartitions: Set<TopicPartition>?
    /// The gaps found since the start (`OffsetGap`), the latest last, at most `recentGapLimit`.
    public private(set) var recentGaps: [OffsetGap] = []
    /// What the polls counted since the start, per topic.
    public private(set) var topicTotals: [String: IngestTotals] = [:]
    /// Flushes committed since the start.
    public private(set) var flushesCommitted = 0
    /// When the last flush committed (nil: none since the start).
    public private(set) var lastFlushCommittedAt: Timestamp?
    /// Stored offsets read and not yet sought (`takeSeeks`).
    private var readOffsets: [Seek] = []
    /// Whether the last read of stored offsets failed: the next one waits a moment first (the source's `readRetryDelay`).
    private var lastReadFailed = false
    /// The in-memory cubes as of the last change applied (nil: memory is off, and no change is queued).
    public private(set) var layers: MemoryLayers?
    /// Changes for `layers` made and not applied yet, oldest first.
    public private(set) var queuedMemoryChanges: [MemoryChange] = []
    /// Changes applied since the start: the sequence number of the oldest one queued.
    private var memoryChangesApplied: UInt64 = 0

    /// How many of the latest gaps `recentGaps` keeps.
    public static let recentGapLimit = 20

    /// `memory`: whether the state keeps the in-memory cubes (`layers`).
    public init(
        archiving: Bool = false, dedup: DedupSpans? = nil, dedupBudgetBytes: Int = .max, pendingLimitBytes: Int = .max, memory: Bool = false,
        zones: ArtistZones = .allUTC
    ) {
        ledger = IngestLedger(archiving: archiving, dedup: dedup, dedupBudgetIDs: dedupBudgetBytes / DedupWindow.bytesPerID, zones: zones)
        self.pendingLimitBytes = pendingLimitBytes
        layers = memory ? MemoryLayers() : nil
    }

    /// A change the in-memory layers (`MemoryLayers`) apply, in the order the state made them.
    public enum MemoryChange: Sendable {
        /// A poll's per-partition deltas join the pending layer.
        case consumed([TopicPartition: InternedDelta])
        /// The partitions are no longer loaded; when the change dropped unflushed work, the pending layer becomes
        /// the cubes of the work left (`rebuildingFrom`), else it stays (nil).
        case ownershipChanged([TopicPartition], rebuildingFrom: [InternedDelta]?)
        /// A flush failed: its cubes are pending again, or, when the ledger took back only part of its batch, the
        /// pending layer becomes the cubes of the work left (`rebuildingFrom`).
        case flushFailed(rebuildingFrom: [InternedDelta]?)
    }

    // MARK: - The in-memory layers

    /// The oldest change queued, when it rebuilds the pending layer: its sequence number and the work to rebuild
    /// from, so that the rebuild can be made apart (`MemoryLayers.Rebuilt`), outside the lock, and handed to
    /// `applyNextMemoryChange` (nil: the oldest change rebuilds nothing, or none is queued).
    public func nextMemoryRebuild() -> (sequence: UInt64, unflushed: [InternedDelta])? {
        switch queuedMemoryChanges.first {
        case .ownershipChanged(_, rebuildingFrom: let unflushed?), .flushFailed(rebuildingFrom: let unflushed?):
            (memoryChangesApplied, unflushed)
        default:
            nil
        }
    }

    /// Applies the oldest change queued for the layers, with the pending layer `rebuilt` apart for it when its
    /// sequence number is the oldest change's (else, applied meanwhile, it is ignored). Answers whether there was one.
    @discardableResult
    public mutating func applyNextMemoryChange(rebuilt: (sequence: UInt64, layer: MemoryLayers.Rebuilt)? = nil) -> Bool {
        guard !queuedMemoryChanges.isEmpty else { return false }
        let change = queuedMemoryChanges.removeFirst()
        let prebuilt = rebuilt?.sequence == memoryChangesApplied ? rebuilt?.layer : nil
        memoryChangesApplied += 1
        layers?.apply(change, rebuilt: prebuilt)
        return true
    }

    /// Applies every change queued for the layers.
    public mutating func settleMemory() {
        while applyNextMemoryChange() {}
    }

    private mutating func queue(_ change: MemoryChange) {
        guard layers != nil else { return }
        queuedMemoryChanges.append(change)
    }

    /// Installs `durable`, a snapshot read from PostgreSQL at the stored `offsets` and trimmed (`sealedDays`,
    /// `droppedDays`), if the owned partitions are exactly `owned` and still stand at those offsets (nothing flushed
    /// or sought since): with the pending cubes, memory then answers alone for them. Answers whether it did.
    public mutating func installMemory(
        _ durable: CubeMemory, readAt offsets: [TopicPartition: Int64], owned: Set<TopicPartition>, everyPartition: Bool,
        sealedDays: Int = 0, droppedDays: Int = 0
    ) -> Bool {
        guard layers != nil, standsAt(offsets, owning: owned) else { return false }
        settleMemory()
        layers?.install(durable, owned: owned, everyPartition: everyPartition, sealedDays: sealedDays, droppedDays: droppedDays)
        return true
    }

    /// The artists' reporting zones were read (a zone was set or changed): events consumed from now on are counted on
    /// their artist's local days in `zones`. What is consumed and not flushed was counted in the zones before, and
    /// PostgreSQL would refuse it (`FlushBatch.zonesGeneration`): those partitions are consumed again from their
    /// stored offsets, in the new zones. Called between flushes only (no batch in flight).
    public mutating func zonesChanged(_ zones: ArtistZones) {
        guard zones != ledger.zones else { return }
        ledger.zones = zones
        mustSeekStoredOffsets(ledger.assigned.filter { ledger.hasUnflushedWork([$0]) })
    }

    /// Stored aggregates were replaced behind the flushes' back (`backbeat rebuild`): memory alone no longer answers
    /// until a snapshot is installed again.
    public mutating func storedAggregatesReplaced() {
        layers?.storedAggregatesReplaced()
    }

    /// Stored numbers were dropped (retention): answers kept from before are retired.
    public mutating func storedNumbersDropped() {
        layers?.storedNumbersDropped()
    }

    /// Replaces the durable layer with a copy of it changed apart (sealed, trimmed) if no install or rebuild happened
    /// since the copy was taken at `epoch` (`MemoryLayers.replaceDurable`).
    @discardableResult
    public mutating func replaceDurable(with changed: CubeMemory, ifStillAt epoch: UInt64, sealedDays: Int, droppedDays: Int) -> Bool {
        layers?.replaceDurable(with: changed, ifStillAt: epoch, sealedDays: sealedDays, droppedDays: droppedDays) ?? false
    }

    // MARK: - Rebalances and positions

    /// The group assigned `partitions`: each waits for its stored offset (`nextStoredOffsetRead`), its messages
    /// ignored until then; work it held from an earlier assignment is dropped.
    public mutating func assigned(_ partitions: [TopicPartition]) {
        changeOwnership(of: partitions) { $0.markStale($1) }
    }

    /// What became of the revoked partitions' unflushed work.
    public enum HandOver: String, Sendable {
        /// Nothing was unflushed.
        case flushed
        /// Dropped: the next owner consumes it again from the stored offsets.
        case unflushed
        /// The partitions were lost (the group moved on without this member): dropped as well.
        case lost
    }

    /// The group took `partitions` away: their unflushed work is dropped (a flush in flight commits, or meets an
    /// offset conflict if the next owner's comes first).
    public mutating func revoked(_ partitions: [TopicPartition], lost: Bool) -> HandOver {
        let handOver: HandOver = lost ? .lost : ledger.hasUnflushedWork(partitions) ? .unflushed : .flushed
        changeOwnership(of: partitions) { $0.revoke($1) }
        return handOver
    }

    /// `partitions` must be sought again from their stored offsets (a position reset, an offset conflict, a failed
    /// flush that had committed, a stored offset moved by an operator): what they consumed is dropped and they wait
    /// for a read of their stored offsets, a moment later when it follows a failure.
    public mutating func mustSeekStoredOffsets(_ partitions: [TopicPartition], afterFailure: Bool = false) {
        changeOwnership(of: partitions) { $0.markStale($1) }
        if afterFailure { lastReadFailed = true }
    }

    /// The read of stored offsets the waiting partitions need now, if any, and whether it must wait
    /// a moment first (the last read failed).
    public mutating func nextStoredOffsetRead() -> (read: IngestLedger.StoredOffsetRead, afterFailure: Bool)? {
        guard let read = ledger.takeStale() else { return nil }
        defer { lastReadFailed = false }
        return (read, lastReadFailed)
    }

    /// The stored offsets of the partitions a seek moves to, and the read they come from.
    public struct Seek: Sendable, Equatable {
        public var read: IngestLedger.StoredOffsetRead
        /// Each partition still waiting for the read, with its stored next offset (nil: nothing stored yet).
        public var offsets: [TopicPartition: Int64?]
        /// The dedup windows stored with the offsets (a partition without one starts with an empty window).
        public var windows: [TopicPartition: DedupWindow]

        public init(read: IngestLedger.StoredOffsetRead, offsets: [TopicPartition: Int64?], windows: [TopicPartition: DedupWindow] = [:]) {
            self.read = read
            self.offsets = offsets
            self.windows = windows
        }

    }

    /// A read of stored offsets ended: with the offsets read (and the dedup windows stored with them), the
    /// partitions still waiting for it are to be sought there (`takeSeeks`); without (it failed), they wait for the
    /// next read.
    public mutating func storedOffsetsRead(
        _ read: IngestLedger.StoredOffsetRead, _ offsets: [TopicPartition: Int64]?, windows: [TopicPartition: DedupWindow] = [:]
    ) {
        guard let offsets else {
            ledger.readFailed(read)
            lastReadFailed = true
            return
        }
        readOffsets.append(Seek(
            read: read, offsets: Dictionary(uniqueKeysWithValues: read.partitions.map { ($0, offsets[$0]) }), windows: windows))
    }

    /// The seeks to run: stored offsets read for partitions that still wait for them.
    public mutating func takeSeeks() -> [Seek] {
        defer { readOffsets.removeAll() }
        return readOffsets.compactMap { seek in
            let waiting = seek.offsets.filter { ledger.isReading($0.key, for: seek.read) }
            return waiting.isEmpty ? nil : Seek(read: seek.read, offsets: waiting, windows: seek.windows.filter { waiting[$0.key] != nil })
        }
    }

    /// The consumer was sought to `seek`'s offsets: the partitions still waiting for its read are owned from there.
    /// Answers them.
    @discardableResult
    public mutating func sought(_ seek: Seek) -> [TopicPartition] {
        let waiting = seek.offsets.keys.filter { ledger.isReading($0, for: seek.read) }.sorted()
        changeOwnership(of: waiting) {
            $0.assign($1, storedOffset: seek.offsets[$1] ?? nil, window: seek.windows[$1] ?? DedupWindow())
        }
        return waiting
    }

    /// The consumer could not be sought to `seek`'s offsets: its partitions wait for the next read.
    public mutating func seekFailed(_ seek: Seek) {
        ledger.readFailed(seek.read)
        lastReadFailed = true
    }

    /// The partitions of the subscribed topics were listed (nil: the list could not be read).
    public mutating func partitionsListed(_ partitions: Set<TopicPartition>?) {
        allPartitions = partitions
    }

    /// A gap found on a partition (`IngestLedger.recordGap`): noted for the next flush and among `recentGaps`.
    /// False when it is not noted (not owned, waiting already, or reported again).
    public mutating func gapFound(_ gap: OffsetGap) -> Bool {
        guard ledger.recordGap(gap) else { return false }
        recentGaps.append(gap)
        if recentGaps.count > Self.recentGapLimit { recentGaps.removeFirst(recentGaps.count - Self.recentGapLimit) }
        return true
    }

    // MARK: - Polls

    /// A poll's messages were consumed at `now` (`IngestLedger.consume`): what they add joins the pending layer.
    /// Answers the first messages of partitions assigned since (how long each went unconsumed).
    public mutating func consumed(
        _ messages: [ConsumedMessage], now: Timestamp, outcome: (ConsumedMessage, IngestLedger.Outcome) -> Void = { _, _ in }
    ) -> [IngestLedger.Resumption] {
        // Messages come in runs of one partition: the run's topic is counted apart and added at its end.
        var topic: String?
        var tally = IngestTotals()
        let polled = ledger.consume(messages, now: now, outcome: { message, result in
            if topic != message.position.topicPartition.topic {
                if let topic { topicTotals[topic, default: IngestTotals()].add(tally) }
                topic = message.position.topicPartition.topic
                tally = IngestTotals()
            }
            tally.count(result)
            outcome(message, result)
        })
        if let topic { topicTotals[topic, default: IngestTotals()].add(tally) }
        if !polled.isEmpty { queue(.consumed(polled)) }
        return ledger.takeResumptions()
    }

    /// What backpressure asks of the consumer now.
    public enum Backpressure: Equatable, Sendable {
        /// Pause these partitions (every owned one: again on each poll while paused, so that partitions assigned
        /// meanwhile are paused too).
        case pause([TopicPartition])
        /// Resume these partitions: flushes brought unflushed work under half the limit.
        case resume([TopicPartition])
    }

    /// Whether consumption must be paused or resumed, as unflushed work stands now (nil: neither).
    public mutating func backpressure() -> Backpressure? {
        pendingBytes = ledger.pendingBytes
        let pause = paused ? pendingBytes > pendingLimitBytes / 2 : pendingBytes > pendingLimitBytes
        if pause { return .pause(ledger.assigned) }
        return paused ? .resume(ledger.assigned) : nil
    }

    /// The consumer ran `action`: answers whether consumption changed between paused and flowing.
    public mutating func backpressureApplied(_ action: Backpressure) -> Bool {
        let pause = if case .pause = action { true } else { false }
        defer { paused = pause }
        return pause != paused
    }

    // MARK: - Flushes

    /// A flush takes every partition's progress since the last one (nil: nothing to write). With memory, the changes
    /// queued are applied first and the pending layer moves in flight: the flight's cubes are exactly the batch's
    /// (`MemoryLayers.Flight`), which a commit adds to the durable layer without adding up the batch again.
    public mutating func flushStarted() -> (batch: FlushBatch, flight: MemoryLayers.Flight?)? {
        guard let batch = ledger.takeBatch() else { return nil }
        // What is left unflushed: an early flush must not see the batch just taken.
        pendingBytes = ledger.pendingBytes
        settleMemory()
        return (batch, layers?.flushStarted())
    }

    /// The batch `flushStarted` took is durable, as of `now`. With memory, its `flight` leaves flight, and `grown`
    /// (`MemoryLayers.commit(of:)` added up apart) becomes the durable layer unless an install or a rebuild happened
    /// since the flush started.
    public mutating func flushCommitted(at now: Timestamp, flight: MemoryLayers.Flight? = nil, grown: CubeMemory? = nil, funnel: ArtistDays? = nil) {
        flushesCommitted += 1
        lastFlushCommittedAt = now
        if let flight { layers?.flushCommitted(epoch: flight.epoch, durable: grown, funnel: funnel) }
    }

    /// Writing `batch` failed: it is put back for the partitions still owned under the same assignment.
    public mutating func flushFailed(_ batch: FlushBatch) {
        let whole = ledger.restore(batch).count == batch.parts.count
        guard layers != nil else { return }
        queue(.flushFailed(rebuildingFrom: whole ? nil : ledger.pendingDeltas))
    }

    /// `batch` met a stored offset it did not expect on `partition` (another owner stored past it): the batch is put
    /// back, and the partition is consumed again from the stored offset.
    public mutating func offsetConflict(_ batch: FlushBatch, on partition: TopicPartition) {
        flushFailed(batch)
        mustSeekStoredOffsets([partition])
    }

    /// Whether a snapshot read at the stored `offsets` can be installed: the owned partitions are exactly `owned`
    /// and still stand at those offsets (nothing flushed or sought since).
    public func standsAt(_ offsets: [TopicPartition: Int64], owning owned: Set<TopicPartition>) -> Bool {
        let stored = ledger.storedOffsets
        return Set(stored.keys) == owned && stored.allSatisfy { $0.value == offsets[$0.key] }
    }

    // MARK: - The rebuild rule

    /// Applies `change` to each of `partitions` in the ledger and queues the layers' change: the partitions are no
    /// longer loaded, and the pending layer is rebuilt from the work left only when the change dropped some.
    private mutating func changeOwnership(of partitions: [TopicPartition], _ change: (inout IngestLedger, TopicPartition) -> Void) {
        guard !partitions.isEmpty else { return }
        let dropping = ledger.hasUnflushedWork(partitions)
        for partition in partitions { change(&ledger, partition) }
        guard layers != nil else { return }
        queue(.ownershipChanged(partitions, rebuildingFrom: dropping ? ledger.pendingDeltas : nil))
    }
}

/// Running totals of the ingest path.
public struct IngestTotals: Sendable, Equatable {
    /// Events counted (`beyondWindow` included).
    public var accepted = 0
    public var rejected = 0
    /// Resent events not counted again.
    public var duplicates = 0
    /// Events counted though older than the dedup window.
    public var beyondWindow = 0
    /// Events rejected because their id was counted within the dedup window with other fields (in `rejected` too).
    public var conflicts = 0

    public init() {}

    public mutating func count(_ outcome: IngestLedger.Outcome) {
        switch outcome {
        case .accepted: accepted += 1
        case .acceptedBeyondWindow: accepted += 1; beyondWindow += 1
        case .duplicate: duplicates += 1
        case .rejected(let reason):
            rejected += 1
            if reason == .conflictingEventID { conflicts += 1 }
        case .ignored: break
        }
    }

    /// The totals of every topic.
    public static func sum(_ totals: some Sequence<IngestTotals>) -> IngestTotals {
        totals.reduce(into: IngestTotals()) { $0.add($1) }
    }

    mutating func add(_ other: IngestTotals) {
        accepted += other.accepted
        rejected += other.rejected
        duplicates += other.duplicates
        beyondWindow += other.beyondWindow
        conflicts += other.conflicts
    }
}
