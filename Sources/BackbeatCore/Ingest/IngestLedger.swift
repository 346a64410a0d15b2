/// The consumer's book of owned partitions: what each has consumed since its last durable flush.
///
/// This is the exactly-once bookkeeping, kept pure so it is tested without Kafka or PostgreSQL:
/// - a partition assigned by the group first waits for its stored offset (`markStale`; `takeStale` starts a read of
///   it, `readFailed` or `isReading` say how it went), and is owned from `assign` (with the offset stored in
///   PostgreSQL) until `revoke`: so no rebalance waits for PostgreSQL;
/// - `consume` validates a poll's messages and adds each to its partition's delta (an `InternedDelta`: each
///   partition interns its own values, and a batch's deltas are read as one when written, `CombinedDeltas`),
///   ignoring anything not owned or already seen;
/// - `takeBatch` hands the deltas and the offset range (stored → next) to a flush, which must store the new offset
///   only if the stored one is still the expected one;
/// - after a failed flush `restore` puts the batch back; after a conflict `markStale` drops the partition so that
///   it is sought again from the stored offset;
/// - `recordGap` notes messages the broker deleted unread (`OffsetGap`): the next batch carries it, with the offset
///   move that steps over it, or, while the partition waits for an operator, alone;
/// - `takeResumptions` answers, for each partition assigned since, the first message consumed: how long the
///   partition went unconsumed across a hand-over, measured by that message's age.
///
/// With `dedup` spans, each partition also keeps a `DedupWindow` (loaded with its stored offset, `assign`): a valid
/// event whose `event_id` it counted already is not counted again (`duplicate`), one seen with other fields is
/// rejected (`conflicting_event_id`), and each batch carries the ids it remembered since the last one, stored
/// beside the offsets.
///
/// When `archiving`, each partition also keeps the archive lines (`ArchiveLine`) of every message it counted, valid
/// or not, so the archive moves in the same steps as the aggregates.
public struct IngestLedger: Sendable {
    private struct PartitionState: Sendable {
        var generation: UInt64
        /// The next offset according to PostgreSQL as of the last flush (nil: nothing stored yet).
        var storedOffset: Int64?
        /// One past the last offset consumed.
        var nextOffset: Int64?
        var delta = InternedDelta()
        /// Archive lines of the messages in `delta` (empty unless archiving).
        var archive: [UInt8] = []
        /// Gaps found since the last flush, to be stored with it.
        var gaps: [OffsetGap] = []
        /// The gap this partition waits at for an operator (nothing more is consumed from it until then).
        var waitingAt: OffsetGap?
        /// When the oldest message of `delta` was consumed (nil: nothing unflushed).
        var unflushedSince: Timestamp?
        /// Whether no message has been consumed since the partition was assigned.
        var awaitingFirstMessage = true
        /// The event ids counted recently (unused without `dedup`).
        var window = DedupWindow()
        /// The newest `occurred_at` counted, in seconds (nil: none yet).
        var newestEventTime: Int64?
    }

    /// The first message consumed from a partition after it was assigned.
    public struct Resumption: Equatable, Sendable {
        public var position: MessagePosition
        /// The message's Kafka timestamp, in milliseconds since 1970.
        public var timestampMilliseconds: Int64
        /// When it was consumed.
        public var consumedAt: Timestamp

        /// How long the message waited between its timestamp and its consumption: when the group keeps up, how
        /// long its partition went unconsumed (a crashed owner's unflushed stretch included, which is consumed
        /// again). Never negative.
        public var waited: Duration {
            .milliseconds(max(0, consumedAt.microseconds / 1000 - timestampMilliseconds))
        }
    }

    private var partitions: [TopicPartition: PartitionState] = [:]
    private var resumptions: [Resumption] = []
    private var generationCounter: UInt64 = 0
    /// Partitions whose stored offset must be read before they are owned (their messages are ignored until then),
    /// with the read they wait for (nil: none started yet).
    private var waitingForRead: [TopicPartition: UInt64?] = [:]
    /// Whether consumed messages are also kept as archive lines.
    public let archiving: Bool
    /// How long each family's event ids are remembered (nil: every valid event is counted).
    public let dedup: DedupSpans?
    /// Most ids the owned partitions' windows remember together (the memory budget): a window over its share
    /// forgets the ids nearest their expiry early (`DedupWindow.forgetEarly`).
    public let dedupBudgetIDs: Int
    /// Ids forgotten early for the budget since the start.
    public private(set) var idsForgottenEarly = 0
    /// The artists' reporting zones: each event consumed from now on is counted on its artist's local hour and day.
    public var zones: ArtistZones

    public init(archiving: Bool = false, dedup: DedupSpans? = nil, dedupBudgetIDs: Int = .max, zones: ArtistZones = .allUTC) {
        self.archiving = archiving
        self.dedup = dedup
        self.dedupBudgetIDs = dedupBudgetIDs
        self.zones = zones
    }

    /// The partitions this consumer owns now.
    public var assigned: [TopicPartition] { partitions.keys.sorted() }

    /// Whether this consumer owns `partition` now.
    public func owns(_ partition: TopicPartition) -> Bool { partitions[partition] != nil }

    /// Event ids the owned partitions' dedup windows remember.
    public var dedupIDCount: Int { partitions.values.reduce(0) { $0 + $1.window.count } }

    /// Bytes the owned partitions' dedup windows hold (`DedupWindow.byteCount`).
    public var dedupByteCount: Int { partitions.values.reduce(0) { $0 + $1.window.byteCount } }

    /// Number of rows waiting across all partitions.
    public var pendingRowCount: Int { partitions.values.reduce(0) { $0 + $1.delta.rowCount } }

    /// Bytes assumed per pending row of a delta (its cell, counters and share of the table and dictionary).
    public static let bytesPerPendingRow = 200
    /// Bytes assumed per play or visit kept for the listener and visitor sketches (its key day and hash).
    public static let bytesPerPendingHash = 24

    /// An estimate of the memory held by unflushed work: rows at `bytesPerPendingRow`, plays and visits at
    /// `bytesPerPendingHash`, archive lines and rejected messages at their size. What backpressure compares with its bound.
    public var pendingBytes: Int {
        partitions.values.reduce(0) { total, state in
            total + state.delta.rowCount * Self.bytesPerPendingRow + state.delta.keptHashCount * Self.bytesPerPendingHash
                + state.archive.count
                + state.delta.rejected.reduce(0) { $0 + ($1.value?.count ?? 0) + ($1.key?.count ?? 0) }
        }
    }

    /// The newest `occurred_at` counted on each owned partition, in seconds: nil until its first event is counted
    /// (or, with dedup, the newest its stored window had seen).
    public var newestEventTimes: [TopicPartition: Int64?] {
        partitions.mapValues(\.newestEventTime)
    }

    /// The stored next offset of each owned partition as this ledger knows it (nil: nothing stored yet).
    public var storedOffsets: [TopicPartition: Int64?] {
        partitions.mapValues(\.storedOffset)
    }

    /// Everything consumed and not yet taken by a flush: each owned partition's delta (what the in-memory pending
    /// layer is rebuilt from when a change of ownership drops some of it, `MemoryLayers.ownershipChanged`).
    public var pendingDeltas: [InternedDelta] {
        partitions.values.map(\.delta)
    }

    /// Whether any of `partitions` holds work consumed and not yet taken by a flush (a gap to store counts).
    public func hasUnflushedWork(_ partitions: some Sequence<TopicPartition>) -> Bool {
        partitions.contains { self.partitions[$0].map { !$0.delta.isEmpty || !$0.gaps.isEmpty } ?? false }
    }

    /// How far each owned partition's stored offset trails what it consumed: messages (offsets) and since when
    /// the oldest of them waits (nil: nothing unflushed).
    public var storedOffsetTrail: [TopicPartition: (messages: Int64, since: Timestamp?)] {
        partitions.mapValues { state in
            guard let next = state.nextOffset else { return (0, nil) }
            return (next - (state.storedOffset ?? next), state.unflushedSince)
        }
    }

    /// The gaps owned partitions wait at for an operator.
    public var waitingGaps: [OffsetGap] {
        partitions.values.compactMap(\.waitingAt).sorted { $0.topicPartition < $1.topicPartition }
    }

    /// Notes a gap found on an owned partition: the next batch stores it. When it resumes (`resumedAt`), the
    /// partition's position moves to it, and the batch stores the new offset with the gap; otherwise the partition
    /// waits at it. False (nothing noted) when the partition is not owned, already waits, or is past the gap's first
    /// missing offset (the same gap reported again before fetching restarted).
    @discardableResult
    public mutating func recordGap(_ gap: OffsetGap) -> Bool {
        guard var state = partitions[gap.topicPartition], state.waitingAt == nil,
              gap.firstMissing >= state.nextOffset ?? gap.firstMissing else { return false }
        state.gaps.append(gap)
        if let resumedAt = gap.resumedAt {
            state.nextOffset = max(state.nextOffset ?? resumedAt, resumedAt)
        } else {
            state.waitingAt = gap
        }
        partitions[gap.topicPartition] = state
        return true
    }

    /// Starts owning `partition`, whose stored next offset is `storedOffset`, with the dedup window stored with it.
    public mutating func assign(_ partition: TopicPartition, storedOffset: Int64?, window: DedupWindow = DedupWindow()) {
        generationCounter += 1
        partitions[partition] = PartitionState(
            generation: generationCounter, storedOffset: storedOffset, nextOffset: storedOffset, window: window,
            newestEventTime: window.newestEventTime)
        waitingForRead[partition] = nil
    }

    /// Stops owning `partition`; its unflushed work is dropped and will be consumed again by the next owner.
    public mutating func revoke(_ partition: TopicPartition) {
        partitions[partition] = nil
        waitingForRead[partition] = nil
    }

    /// What happened to one message.
    public enum Outcome: Equatable, Sendable {
        case accepted
        /// Counted, though older than the dedup window: a resend of it would be counted again.
        case acceptedBeyondWindow
        /// A resend of an event counted within the dedup window: not counted again.
        case duplicate
        case rejected(Rejection.Reason)
        /// Not owned, or at an offset already consumed.
        case ignored
    }

    /// Validates each of a poll's messages against `now` and adds its event to its partition's work, interned once:
    /// into the poll's own delta of that partition, which then joins the partition's unflushed delta by its integer
    /// ids. Answers those per-poll deltas (what the in-memory layers add, `MemoryLayers.consumed`). `outcome` sees
    /// what happened to each message; `onAccepted`, if given, each valid event's record and the bytes its strings
    /// are spans of.
    public mutating func consume(
        _ messages: [ConsumedMessage], now: Timestamp, outcome: (ConsumedMessage, Outcome) -> Void = { _, _ in },
        onAccepted: ((EventRecord, UnsafeRawBufferPointer) -> Void)? = nil
    ) -> [TopicPartition: InternedDelta] {
        var polled: [TopicPartition: InternedDelta] = [:]
        // The run of messages of one partition being read: its state, taken out of `partitions` meanwhile (so that
        // it is uniquely referenced), and what this poll added to it.
        var partition: TopicPartition?
        var state: PartitionState?
        var added = InternedDelta(zones: zones)
        for message in messages {
            if partition != message.position.topicPartition {
                if let partition, let state { end(partition, state, added, now: now, into: &polled) }
                partition = message.position.topicPartition
                state = partitions.removeValue(forKey: message.position.topicPartition)
                added = InternedDelta(zones: zones)
            }
            guard state != nil else {
                outcome(message, .ignored)
                continue
            }
            let first = state!.awaitingFirstMessage
            let result = Self.ingest(
                message, now: now, archiving: archiving, dedup: dedup, into: &state!, &added, onAccepted: onAccepted)
            if first && result != .ignored {
                state!.awaitingFirstMessage = false
                if let timestamp = message.timestampMilliseconds {
                    resumptions.append(Resumption(position: message.position, timestampMilliseconds: timestamp, consumedAt: now))
                }
            }
            outcome(message, result)
        }
        if let partition, let state { end(partition, state, added, now: now, into: &polled) }
        return polled
    }

    /// Puts a run's partition back with what the poll added to it merged in (consumed at `now`).
    private mutating func end(
        _ partition: TopicPartition, _ state: PartitionState, _ added: InternedDelta, now: Timestamp,
        into polled: inout [TopicPartition: InternedDelta]
    ) {
        var state = state
        if state.unflushedSince == nil && !added.isEmpty { state.unflushedSince = now }
        // This partition's share of the budget (it is out of `partitions` meanwhile).
        let share = dedupBudgetIDs / (partitions.count + 1)
        if state.window.count > share { idsForgottenEarly += state.window.forgetEarly(keepingAtMost: share) }
        if state.delta.isEmpty { state.delta = added } else { state.delta.merge(added) }
        partitions[partition] = state
        guard !added.isEmpty else { return }
        if var earlier = polled.removeValue(forKey: partition) {
            earlier.merge(added)
            polled[partition] = earlier
        } else {
            polled[partition] = added
        }
    }

    /// Validates one message of an owned partition and adds it to `added` unless its offset was consumed already or
    /// (with `dedup`) its event was counted already.
    private static func ingest(
        _ message: ConsumedMessage, now: Timestamp, archiving: Bool, dedup: DedupSpans?, into state: inout PartitionState,
        _ added: inout InternedDelta, onAccepted: ((EventRecord, UnsafeRawBufferPointer) -> Void)?
    ) -> Outcome {
        if let next = state.nextOffset, message.position.offset < next { return .ignored }
        state.nextOffset = message.position.offset + 1
        if archiving { ArchiveLine.appendMessage(message, consumedAt: now, to: &state.archive) }
        let rejection: Rejection
        switch EventDecoder.decodeRecord(message.value, now: now) {
        case .success(let record):
            let value = message.value ?? []
            let admitted = value.withUnsafeBytes { bytes -> Result<Outcome, Rejection> in
                var outcome = Outcome.accepted
                if let dedup {
                    switch state.window.admit(record, in: bytes, spans: dedup) {
                    case .count: break
                    case .countBeyondWindow: outcome = .acceptedBeyondWindow
                    case .duplicate: return .success(.duplicate)
                    case .reject(let conflict): return .failure(conflict)
                    }
                }
                added.add(record, in: bytes)
                state.newestEventTime = max(state.newestEventTime ?? .min, record.occurredAt.seconds)
                onAccepted?(record, bytes)
                return .success(outcome)
            }
            switch admitted {
            case .success(let outcome): return outcome
            case .failure(let conflict): rejection = conflict
            }
        case .failure(let invalid):
            rejection = invalid
        }
        added.rejected.append(RejectedMessage(position: message.position, key: message.key, value: message.value, rejection: rejection))
        return .rejected(rejection.reason)
    }

    /// Takes the first messages consumed from partitions assigned since the last call (messages without a timestamp
    /// are left out).
    public mutating func takeResumptions() -> [Resumption] {
        defer { resumptions.removeAll() }
        return resumptions
    }

    /// Takes every partition's progress since the last flush, or nil when there is none.
    public mutating func takeBatch() -> FlushBatch? {
        var parts: [FlushBatch.Part] = []
        for (partition, var state) in partitions {
            guard let next = state.nextOffset, next != state.storedOffset || !state.gaps.isEmpty else { continue }
            parts.append(FlushBatch.Part(
                topicPartition: partition, generation: state.generation,
                expectedOffset: state.storedOffset, newOffset: next, delta: state.delta, archive: state.archive, gaps: state.gaps,
                unflushedSince: state.unflushedSince, remembered: state.window.takeAdded(),
                newestEventTime: state.window.newestEventTime
            ))
            state.storedOffset = next
            state.delta = InternedDelta()
            state.archive = []
            state.gaps = []
            state.unflushedSince = nil
            partitions[partition] = state
        }
        return parts.isEmpty ? nil : FlushBatch(parts: parts.sorted { $0.topicPartition < $1.topicPartition }, zonesGeneration: zones.generation)
    }

    /// Puts back a batch whose flush failed, for partitions still owned under the same assignment; answers those
    /// partitions.
    @discardableResult
    public mutating func restore(_ batch: FlushBatch) -> Set<TopicPartition> {
        var restored: Set<TopicPartition> = []
        for part in batch.parts {
            guard var state = partitions[part.topicPartition], state.generation == part.generation else { continue }
            state.storedOffset = part.expectedOffset
            var delta = part.delta
            delta.merge(state.delta)
            state.delta = delta
            state.archive = part.archive + state.archive
            state.gaps = part.gaps + state.gaps
            state.window.putBack(part.remembered)
            state.unflushedSince = [part.unflushedSince, state.unflushedSince].compactMap { $0 }.min()
            partitions[part.topicPartition] = state
            restored.insert(part.topicPartition)
        }
        return restored
    }

    /// Has `partition` wait for its stored offset, dropping what it consumed (just assigned; its stored offset turned
    /// out to differ from ours; a read of it failed): it is sought from the stored offset and assigned once that is
    /// read (`takeStale`). Its messages are ignored until then.
    public mutating func markStale(_ partition: TopicPartition) {
        partitions[partition] = nil
        waitingForRead[partition] = .some(nil)
    }

    /// A read of stored offsets that partitions wait for (`takeStale`).
    public struct StoredOffsetRead: Hashable, Sendable {
        public let id: UInt64
        public let partitions: [TopicPartition]
    }

    /// The partitions waiting for their stored offsets, now read by `StoredOffsetRead` (nil: none waits). Once it is
    /// read, those still `isReading` it are sought there and assigned; if it fails, `readFailed`.
    public mutating func takeStale() -> StoredOffsetRead? {
        let unread = waitingForRead.filter { $0.value == nil }.keys.sorted()
        guard !unread.isEmpty else { return nil }
        generationCounter += 1
        let read = StoredOffsetRead(id: generationCounter, partitions: unread)
        for partition in unread { waitingForRead[partition] = read.id }
        return read
    }

    /// Whether `partition` still waits for `read` (not revoked, assigned or marked stale again since).
    public func isReading(_ partition: TopicPartition, for read: StoredOffsetRead) -> Bool {
        waitingForRead[partition] == read.id
    }

    /// Whether any partition waits for its stored offset.

    /// `read` failed: the partitions still waiting for it wait for the next read.
    public mutating func readFailed(_ read: StoredOffsetRead) {
        for partition in read.partitions where isReading(partition, for: read) { markStale(partition) }
    }
}

/// The work of one flush: each partition's delta and the offset move that must be stored with it.
public struct FlushBatch: Sendable {
    /// One partition's share of a flush.
    public struct Part: Sendable {
        public var topicPartition: TopicPartition
        public var generation: UInt64
        /// The stored offset this flush expects to find (nil: no row yet).
        public var expectedOffset: Int64?
        /// The offset to store.
        public var newOffset: Int64
        public var delta: InternedDelta
        /// Archive lines of the part's messages (empty unless archiving).
        public var archive: [UInt8]
        /// For a plain input's position: the hash of its lines up to `newOffset` (`AppliedLinesHash`), stored with it.
        public var appliedLinesHash: String?
        /// Messages the broker deleted unread, stored with the offset move (`OffsetGap`).
        public var gaps: [OffsetGap]
        /// When the oldest of the part's messages was consumed (kept so that a failed flush puts it back).
        public var unflushedSince: Timestamp?
        /// The event ids the partition's dedup window remembered since the last flush, stored with the offset move.
        public var remembered: [DedupWindow.Remembered]
        /// The newest event time the window has seen, in seconds (nil: none, or no dedup).
        public var newestEventTime: Int64?

        public init(
            topicPartition: TopicPartition, generation: UInt64, expectedOffset: Int64?, newOffset: Int64, delta: InternedDelta = InternedDelta(),
            archive: [UInt8] = [], appliedLinesHash: String? = nil, gaps: [OffsetGap] = [], unflushedSince: Timestamp? = nil,
            remembered: [DedupWindow.Remembered] = [], newestEventTime: Int64? = nil
        ) {
            self.remembered = remembered
            self.newestEventTime = newestEventTime
            self.gaps = gaps
            self.unflushedSince = unflushedSince
            self.topicPartition = topicPartition
            self.generation = generation
            self.expectedOffset = expectedOffset
            self.newOffset = newOffset
            self.delta = delta
            self.archive = archive
            self.appliedLinesHash = appliedLinesHash
        }
    }

    public var parts: [Part]
    /// The generation of the artists' zones its deltas were counted in (`ArtistZones.generation`): PostgreSQL refuses
    /// the batch when other zones are recorded by then (`ZonesChanged`).
    public var zonesGeneration: Int64

    public init(parts: [Part], zonesGeneration: Int64 = 0) {
        self.parts = parts
        self.zonesGeneration = zonesGeneration
    }

    /// Every part's delta read as one: what the store writes (its rows by artist-day, its listener sketches), made
    /// from the parts' deltas in place.
    public var combinedDeltas: CombinedDeltas {
        CombinedDeltas(parts.map(\.delta))
    }

    /// All parts' deltas added together into one (a copy of every row; `combinedDeltas` reads them in place).
    public var mergedDelta: InternedDelta {
        guard parts.count != 1 else { return parts[0].delta }
        var merged = InternedDelta()
        for part in parts { merged.merge(part.delta) }
        return merged
    }

    /// The rejected messages of every part.
    public var rejected: [RejectedMessage] {
        parts.flatMap(\.delta.rejected)
    }

    /// Rows across the parts' deltas (a key in two parts counts twice, as the store appends it twice).
    public var rowCount: Int {
        parts.reduce(0) { $0 + $1.delta.rowCount }
    }
}
