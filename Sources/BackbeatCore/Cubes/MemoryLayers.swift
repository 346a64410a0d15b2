/// The in-memory cubes of a live ingest, in three layers:
/// - `durable`: what PostgreSQL holds from the horizon on: a snapshot loaded, grown by every flush that commits;
/// - `inFlight`: the cubes of the batch a flush is writing now;
/// - `pending`: the cubes of what was consumed and no flush has taken yet (all days, also those before the horizon).
///
/// The transitions are the changes the ingest's state makes (`IngestState.MemoryChange`, `apply`), in its order: what
/// a poll consumed joins the pending cubes (`consumed`, given the per-partition deltas `IngestLedger.consume`
/// answers, so an event is interned once); a flush takes them in flight (`flushStarted`, as `takeBatch` takes every
/// partition's delta); a committed flush moves its cubes into `durable` without projecting its events again
/// (`flushCommitted`); a failed one returns them to pending, ahead of what was consumed since (`flushFailed`). Only a
/// change that drops part of the ledger's unflushed work (the state decides) rebuilds `pending` from what the ledger
/// still holds: the layers are one aggregate per layer, not one per partition, because a partition's cubes apart
/// cost far more memory when partitions do not split the artists (docs/performance.md).
///
/// Which answers the layers hold whole (`covers`): `loaded` is the partitions owned without a break since the snapshot
/// was installed. For an artist whose messages all arrive on loaded partitions, durable + in flight + pending is
/// everything consumed from the horizon on, however the other partitions move between instances: a committed flush
/// is durable for every partition it wrote, so it grows `durable` even after one of them changed hands (that
/// partition just is no longer loaded). `complete` holds while `loaded` is every partition (it was at the install,
/// and no ownership changed since): then any query is covered. A change of ownership takes its partitions out of
/// `loaded`; a rebuild of the stored aggregates empties it and bumps `epoch`, as an install does: a flush started
/// under another epoch must not grow `durable`.
public struct MemoryLayers: Sendable {
    public private(set) var durable = CubeMemory()
    public private(set) var inFlight: CubeMemory?
    public private(set) var pending = CubeMemory()
    /// The partitions whose every message from the horizon on is in the layers (owned since the install; empty
    /// while nothing is installed).
    public private(set) var loaded: Set<TopicPartition> = []
    /// Whether a snapshot is installed (and no rebuild replaced the stored aggregates since).
    public private(set) var installed = false
    /// Whether `loaded` is every partition of the consumed topics.
    public private(set) var complete = false
    public private(set) var epoch: UInt64 = 0
    /// Snapshots installed, and days sealed and dropped by installs and upkeep, since the start.
    public private(set) var snapshotsLoaded = 0
    public private(set) var daysSealed = 0
    public private(set) var daysDropped = 0
    /// Changes to what the layers answer for each artist: an answer made from them stays right while its artist's
    /// stamp stays (`stamp(of:reading:days:)`).
    private var versions = ArtistVersions()
    /// The artists of `pending` and of `inFlight`, with their days. Days before the horizon are read from PostgreSQL
    /// and `pending` alone, so a flush starting, failing or committing changes those artists' answers for them.
    private var pendingArtists = ArtistDays()
    private var inFlightArtists = ArtistDays()

    public init() {}

    /// What an answer for `artist` made from these layers (and PostgreSQL before the horizon) of `families` over the
    /// UTC days `days` depends on: it is still right while the stamp is the same. Events consumed for the artist on those
    /// days, a flush holding them starting, failing or committing, a snapshot installed, a change of ownership,
    /// stored numbers replaced or dropped each change it.
    public func stamp(of artist: String, reading families: ArtistVersions.Families, days: Range<Int64>) -> ArtistVersions.Stamp {
        versions.stamp(of: artist, reading: families, days: days)
    }

    /// `stamp(of:reading:days:)` of every family at once (`ArtistVersions.Stamps`).
    public func stamps(of artist: String, days: Range<Int64>) -> ArtistVersions.Stamps {
        versions.stamps(of: artist, days: days)
    }

    /// What a flush took: the epoch it started under, and its cubes.
    public struct Flight: Sendable {
        public var epoch: UInt64
        public var layer: CubeMemory
    }

    /// Applies a change the ingest's state made (`IngestState.MemoryChange`). `rebuilt`: the pending layer the change
    /// rebuilds, made apart from its `rebuildingFrom` (`Rebuilt(from:)`) so that the lock is not held meanwhile; nil
    /// makes it here.
    public mutating func apply(_ change: IngestState.MemoryChange, rebuilt: Rebuilt? = nil) {
        switch change {
        case .consumed(let polled): consumed(polled)
        case .ownershipChanged(let partitions, let unflushed):
            ownershipChanged(of: partitions, rebuilt: unflushed.map { rebuilt ?? Rebuilt(from: $0) })
        case .flushFailed(let unflushed): flushFailed(rebuilt: unflushed.map { rebuilt ?? Rebuilt(from: $0) })
        }
    }

    /// A pending layer made from the ledger's unflushed work, and its artists' days.
    public struct Rebuilt: Sendable {
        var pending = CubeMemory()
        var artists = ArtistDays()

        /// The cubes of `unflushed` (`IngestLedger.pendingDeltas`).
        public init(from unflushed: [InternedDelta]) {
            for delta in unflushed {
                pending.add(delta)
                artists.formUnion(delta.artistDays)
            }
        }
    }

    /// Adds a poll's per-partition deltas to the pending cubes.
    public mutating func consumed(_ polled: [TopicPartition: InternedDelta]) {
        for delta in polled.values where !delta.isEmpty {
            pending.add(delta)
            let artists = delta.artistDays
            pendingArtists.formUnion(artists)
            versions.changed(artists)
        }
    }

    /// `partitions` were assigned, revoked or marked stale: they are no longer loaded (an assigned one is loaded by
    /// the next install), and memory alone no longer answers every query. When the change dropped unflushed work,
    /// `rebuilt` is made from the ledger's unflushed work as the change left it (`IngestLedger.pendingDeltas`) and
    /// becomes `pending`; nil when it dropped none, and `pending` stays.
    public mutating func ownershipChanged(of partitions: some Sequence<TopicPartition>, rebuilt: Rebuilt?) {
        if let rebuilt { replacePending(with: rebuilt) }
        loaded.subtract(partitions)
        complete = false
        versions.changedEverything()
    }

    /// Whether the layers answer alone for data whose messages all arrive on `partitions` (an artist's, say). Data
    /// of no known partition (an artist not flushed yet, or only replayed) is covered only when memory is complete.
    public func covers(_ partitions: Set<TopicPartition>) -> Bool {
        installed && (complete || (!partitions.isEmpty && partitions.isSubset(of: loaded)))
    }

    /// A flush took all the unflushed work: the pending cubes move in flight.
    public mutating func flushStarted() -> Flight {
        let taken = pending
        inFlight = taken
        pending = CubeMemory()
        inFlightArtists = pendingArtists
        pendingArtists = ArtistDays()
        versions.changed(inFlightArtists)
        return Flight(epoch: epoch, layer: taken)
    }

    /// What the commit of the flush started under `epoch` adds up: `durable` and the in-flight cubes, taken out so
    /// that the addition (`Commit.grown`) runs apart while the layers are read and added to; nil when a snapshot was
    /// installed or the stored aggregates replaced since the flush started (its cubes then stay out of `durable`).
    public func commit(of epoch: UInt64) -> Commit? {
        guard installed, self.epoch == epoch, let inFlight else { return nil }
        return Commit(durable: durable, flight: inFlight)
    }

    /// The layers a commit adds up.
    public struct Commit: Sendable {
        let durable: CubeMemory
        let flight: CubeMemory

        /// `durable` with the in-flight cubes added, and `funnel`, what the flush changed in the page funnel
        /// (`Store.mergeSessions`: made when it wrote, not when the events were consumed).
        public func grown(adding funnel: InternedDelta? = nil) -> CubeMemory {
            var grown = durable
            grown.add(flight)
            if let funnel { grown.add(funnel) }
            return grown
        }
    }

    /// The flush started under `epoch` committed: its cubes leave flight, and `grown` (`commit(of:)`'s addition)
    /// becomes the durable layer unless a snapshot was installed or a rebuild happened meanwhile.
    public mutating func flushCommitted(epoch: UInt64, durable grown: CubeMemory?, funnel: ArtistDays? = nil) {
        if let grown { replaceDurable(with: grown, ifStillAt: epoch) }
        inFlight = nil
        if let funnel { inFlightArtists.formUnion(funnel) }
        versions.changed(inFlightArtists)
        inFlightArtists = ArtistDays()
    }

    /// A flush failed. When the ledger took its whole batch back (`rebuilt` nil), the in-flight cubes are pending
    /// again, ahead of what was consumed since; when it took back only part of it (a partition changed hands during
    /// the flight), `pending` becomes `rebuilt`, made from the ledger's unflushed work.
    public mutating func flushFailed(rebuilt: Rebuilt?) {
        if let rebuilt {
            replacePending(with: rebuilt)
            versions.changedEverything()
        } else if var returned = inFlight {
            returned.add(pending)
            pending = returned
            pendingArtists.formUnion(inFlightArtists)
            versions.changed(inFlightArtists)
        }
        inFlight = nil
        inFlightArtists = ArtistDays()
    }

    /// Installs `durable`, read from PostgreSQL while the ledger's stored offsets of the `owned` partitions were the
    /// snapshot's and no flush was in flight: with the pending cubes, which are the ledger's unflushed work, memory
    /// alone answers for the owned partitions (not empty), and for every query when they are all the partitions
    /// (`everyPartition`). `sealedDays` and `droppedDays`: what trimming the snapshot sealed and dropped (counted).
    public mutating func install(
        _ durable: CubeMemory, owned: Set<TopicPartition>, everyPartition: Bool, sealedDays: Int = 0, droppedDays: Int = 0
    ) {
        self.durable = durable
        snapshotsLoaded += 1
        daysSealed += sealedDays
        daysDropped += droppedDays
        loaded = owned
        installed = true
        complete = everyPartition
        epoch += 1
        versions.changedEverything()
    }

    /// Stored aggregates were replaced behind the flushes' back (`backbeat rebuild`): memory alone no longer
    /// answers until a snapshot is installed again. Pending work is the ledger's and stays.
    public mutating func storedAggregatesReplaced() {
        loaded = []
        installed = false
        complete = false
        epoch += 1
        versions.changedEverything()
    }

    /// Stored numbers were dropped (retention): an answer that read them may now be refused.
    public mutating func storedNumbersDropped() {
        versions.changedEverything()
    }

    /// Replaces `durable` with a copy of it changed apart (grown by a commit, sealed, trimmed) if no install or rebuild
    /// happened since the copy was taken at `epoch`, counting the days the change sealed and dropped. Answers whether
    /// it did.
    @discardableResult
    public mutating func replaceDurable(with changed: CubeMemory, ifStillAt epoch: UInt64, sealedDays: Int = 0, droppedDays: Int = 0) -> Bool {
        guard self.epoch == epoch else { return false }
        durable = changed
        daysSealed += sealedDays
        daysDropped += droppedDays
        return true
    }

    /// Day buckets held in the durable layer.
    public var daysHeld: Int { durable.dayRange.map { $0.count } ?? 0 }

    /// Bytes held by all three layers.
    public var byteCount: Int { durable.byteCount + pending.byteCount + (inFlight?.byteCount ?? 0) }

    /// Whether nothing is pending or in flight.
    public var isIdle: Bool {
        inFlight == nil && pending.dayRange == nil
    }

    /// `pending` becomes the cubes of the ledger's unflushed work.
    private mutating func replacePending(with rebuilt: Rebuilt) {
        pending = rebuilt.pending
        pendingArtists = rebuilt.artists
    }
}
