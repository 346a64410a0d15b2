/// The in-memory cubes of a live ingest, in three layers, each partition's work apart until it is durable:
/// - `durable`: what PostgreSQL holds from the horizon on: a snapshot loaded, grown by every flush that commits;
/// - `inFlight`: each partition's cubes of the batch a flush is writing now;
/// - `pending`: each partition's cubes of what it consumed and no flush has taken yet (all days, also those before
///   the horizon).
///
/// The transitions mirror the `IngestLedger`'s, applied in the ledger's order: what a poll consumed joins its
/// partitions' pending cubes (`consumed`, the per-poll deltas `IngestLedger.consume` answers, so an event is interned
/// once); a flush takes every pending cube in flight (`flushStarted`, as `takeBatch` takes every partition's delta);
/// a committed flush moves its cubes into `durable` (`flushCommitted`) and a failed one returns those of the
/// partitions the ledger took back (`flushFailed`, given what `IngestLedger.restore` answered); a partition assigned,
/// revoked or stale after an offset conflict starts over without its pending cubes (`ownershipChanged`). No
/// transition rebuilds the cubes of the other partitions.
///
/// `complete` holds while durable + in flight + pending is everything consumed from the horizon on: that needs the
/// ingest to own every partition since the snapshot was installed. Any change of ownership or rebuild clears it, and
/// bumps `epoch`: a flush started under another epoch must not grow `durable`.
public struct MemoryLayers: Sendable {
    public private(set) var durable = CubeMemory()
    public private(set) var inFlight: [TopicPartition: CubeMemory] = [:]
    public private(set) var pending: [TopicPartition: CubeMemory] = [:]
    public private(set) var complete = false
    public private(set) var epoch: UInt64 = 0

    public init() {}

    /// What a flush took: the epoch it started under, and its cubes.
    public struct Flight: Sendable {
        public var epoch: UInt64
        public var layers: [CubeMemory]
    }

    /// Adds a poll's per-partition deltas to their partitions' pending cubes.
    public mutating func consumed(_ polled: [TopicPartition: InternedDelta]) {
        for (partition, delta) in polled where !delta.isEmpty {
            pending[partition, default: CubeMemory()].add(delta)
        }
    }

    /// Partitions were assigned, revoked or marked stale (`IngestLedger.assign`, `revoke`, `markStale`): their
    /// unflushed work starts over or goes, and their pending cubes with it; memory alone no longer answers.
    public mutating func ownershipChanged(_ partitions: some Sequence<TopicPartition>) {
        for partition in partitions { pending[partition] = nil }
        invalidate()
    }

    /// A flush took every partition's unflushed work: their pending cubes move in flight.
    public mutating func flushStarted() -> Flight {
        inFlight = pending
        pending = [:]
        return Flight(epoch: epoch, layers: Array(inFlight.values))
    }

    /// What the commit of the flush started under `epoch` adds up: `durable` and the in-flight cubes, taken out so
    /// that the addition (`Commit.grown`) runs apart while the layers are read and added to; nil when ownership
    /// changed since the flush started (its cubes then stay out of `durable`).
    public func commit(of epoch: UInt64) -> Commit? {
        guard complete, self.epoch == epoch else { return nil }
        return Commit(durable: durable, flight: Array(inFlight.values))
    }

    /// The layers a commit adds up.
    public struct Commit: Sendable {
        let durable: CubeMemory
        let flight: [CubeMemory]

        /// `durable` with the in-flight cubes added.
        public func grown() -> CubeMemory {
            var grown = durable
            for layer in flight { grown.add(layer) }
            return grown
        }
    }

    /// The flush started under `epoch` committed: its cubes leave flight, and `grown` (`commit(of:)`'s addition)
    /// becomes the durable layer unless ownership changed meanwhile.
    public mutating func flushCommitted(epoch: UInt64, durable grown: CubeMemory?) {
        if let grown { replaceDurable(with: grown, ifStillAt: epoch) }
        inFlight = [:]
    }

    /// A flush failed: the in-flight cubes of `restored` (the partitions whose batch the ledger took back) are pending
    /// again, ahead of what they consumed since; the others' are dropped with their batch.
    public mutating func flushFailed(restored: Set<TopicPartition>) {
        for (partition, layer) in inFlight where restored.contains(partition) {
            var returned = layer
            if let since = pending[partition] { returned.add(since) }
            pending[partition] = returned
        }
        inFlight = [:]
    }

    /// Installs `durable`, read from PostgreSQL while the ledger's stored offsets were the snapshot's and no flush
    /// was in flight: with the pending cubes, which are the ledger's unflushed work, memory alone answers.
    public mutating func install(_ durable: CubeMemory) {
        self.durable = durable
        complete = true
        epoch += 1
    }

    /// Stored aggregates were replaced behind the flushes' back (`backbeat rebuild`): memory alone no longer
    /// answers until a snapshot is installed again. Pending work is the ledger's and stays.
    public mutating func storedAggregatesReplaced() {
        invalidate()
    }

    /// Replaces `durable` with a copy of it changed apart (grown by a commit, sealed, trimmed) if no change of
    /// ownership happened since the copy was taken at `epoch`. Answers whether it did.
    @discardableResult
    public mutating func replaceDurable(with changed: CubeMemory, ifStillAt epoch: UInt64) -> Bool {
        guard self.epoch == epoch else { return false }
        durable = changed
        return true
    }

    /// Whether nothing is pending or in flight.
    public var isIdle: Bool {
        inFlight.isEmpty && pending.values.allSatisfy { $0.dayRange == nil }
    }

    private mutating func invalidate() {
        complete = false
        epoch += 1
    }
}
