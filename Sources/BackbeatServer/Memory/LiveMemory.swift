import BackbeatCore
import Dispatch
import Synchronization

/// This instance's in-memory cubes (`MemoryLayers`: durable, in flight and pending), and whether they alone answer
/// queries.
///
/// The changes the ingest's state makes (`IngestState.MemoryChange`: what a poll consumed, a flush starting or
/// failing, ownership changing) and the snapshots installed are submitted under the state's lock, so in its order,
/// and applied in that order on a queue of their own (`changes`): the polling thread hands over what it consumed and
/// polls on while the cubes are added up on another core. Queries see the layers as of the last change applied, a few milliseconds behind the
/// state at most, and never an event in two layers: a flush's batch leaves `pending` by the change that starts it,
/// which the flush awaits before it writes.
///
/// Lock order: the ingest state's lock, then this one; nothing here takes the state's lock.
final class LiveMemory: Sendable {
    /// Counters of how queries were answered, and of the work of sealing and eviction.
    struct Statistics: Sendable {
        var answeredFromMemory = 0
        var answeredFromMemoryAndPostgres = 0
        var answeredFromPostgres = 0
        /// Dashboard answers served from `AnswerCache` (kept, or made by another request meanwhile): read nowhere.
        var answeredFromCache = 0
        /// Artist queries sent to the instance that holds the artist in memory, and answered there.
        var forwarded = 0
        /// Forwarded queries the other instance did not answer (in time), answered here instead.
        var forwardFailures = 0
        var snapshotsLoaded = 0
        var daysSealed = 0
        var daysDropped = 0
    }

    private struct State: Sendable {
        var layers = MemoryLayers()
        var statistics = Statistics()
    }

    /// Open cells per sealed cell at which a sealed day is sealed again while events arrive. Open cells cost about
    /// 28 times the bytes of sealed ones, so this bounds a day's open part to some 1.4 times its sealed bytes. During
    /// a backlog spread over many days each flush opens every one of them, and each commit copies the open parts it
    /// grows: at a quarter, serve's peak on the bench's 1M events was 267-296 MB; at a twentieth 231-249 MB, at the
    /// same speed (docs/performance.md). Resealing a day after each late event would cost the flush loop a re-encoding
    /// of every day touched per flush.
    static let resealShare = 0.05

    let configuration: MemoryConfiguration
    private let state = Mutex(State())
    /// Applies the submitted changes one after the other, in the order submitted (a serial queue).
    private let changes = DispatchQueue(label: "backbeat.memory.changes")
    /// Changes submitted and not yet applied.
    private let backlog = Atomic<Int>(0)
    /// Changes not yet applied beyond which `keepUp` makes the polling thread wait.
    static let backlogLimit = 4

    init(configuration: MemoryConfiguration) {
        self.configuration = configuration
    }

    /// The layers as they are now; queries read this copy without holding any lock.
    func snapshot() -> MemoryLayers {
        state.withLock { $0.layers }
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// `MemoryLayers.stamp(of:days:)` of the layers as they are now.
    func stamp(of artist: String, days: Range<Int64>) -> ArtistVersions.Stamp {
        state.withLock { $0.layers.stamp(of: artist, days: days) }
    }

    /// Day buckets held in the durable layer and bytes held by all layers, counted under the lock: a snapshot held
    /// while a poll's additions arrive would make them copy the pending layers they add to.
    func footprint() -> (daysHeld: Int, bytes: Int) {
        state.withLock { ($0.layers.daysHeld, $0.layers.byteCount) }
    }

    // MARK: - Submitted under the ingest state's lock

    /// Applies the changes the ingest's state queued (`IngestState.takeMemoryChanges`), in their order. Answers,
    /// once they are applied, the flight of the flush among them that started (`MemoryLayers.Flight`: the epoch to
    /// hand back to `flushCommitted`, and the in-flight cubes, exactly the batch taken, which the flush writes
    /// instead of projecting it again), nil if none did.
    @discardableResult
    func apply(_ changes: [IngestState.MemoryChange]) -> ChangeApplied<MemoryLayers.Flight?> {
        submit { [self] in
            state.withLock { state in
                changes.reduce(nil as MemoryLayers.Flight?) { flight, change in state.layers.apply(change) ?? flight }
            }
        }
    }

    /// Installs a snapshot read from PostgreSQL while the state's stored offsets of the `owned` partitions equal the
    /// snapshot's (already sealed and trimmed: the counts are for the statistics). Answers once it is installed.
    func install(
        _ durable: CubeMemory, owned: Set<TopicPartition>, everyPartition: Bool, sealedDays: Int, droppedDays: Int
    ) -> ChangeApplied<Void> {
        submit { [self] in
            state.withLock {
                $0.layers.install(durable, owned: owned, everyPartition: everyPartition)
                $0.statistics.snapshotsLoaded += 1
                $0.statistics.daysSealed += sealedDays
                $0.statistics.daysDropped += droppedDays
            }
        }
    }

    /// Runs `change` after every change submitted before it.
    @discardableResult
    private func submit<Value: Sendable>(_ change: @escaping @Sendable () -> Value) -> ChangeApplied<Value> {
        let applied = ChangeApplied<Value>()
        backlog.add(1, ordering: .relaxed)
        changes.async { [self] in
            applied.resolve(change())
            backlog.subtract(1, ordering: .relaxed)
        }
        return applied
    }

    /// Returns once every change submitted before has been applied.
    func settled() async {
        await submit {}.value()
    }

    // MARK: - Called by the polling thread, outside the state's lock

    /// Blocks while more than `backlogLimit` changes wait to be applied: what the poll thread hands over is bounded
    /// by what the other core adds up.
    func keepUp() {
        guard backlog.load(ordering: .relaxed) > Self.backlogLimit else { return }
        changes.sync {}
    }

    // MARK: - Called by the flush loop only (the one writer of `durable` besides `install`)

    /// Stored aggregates were replaced behind the flushes' back (`backbeat rebuild`): memory alone no longer
    /// answers until a snapshot is loaded again.
    func storedAggregatesReplaced() {
        state.withLock { $0.layers.storedAggregatesReplaced() }
    }

    /// Stored numbers were dropped (retention, here or by another instance): answers kept from before are retired.
    func storedNumbersDropped() {
        state.withLock { $0.layers.storedNumbersDropped() }
    }

    /// The flush started under `epoch` committed: its in-flight cubes join `durable` (unless ownership changed since
    /// it started; they are the flushed batch's cubes already, so its events are not projected again) and leave
    /// flight. The addition runs on a copy, outside the lock, so queries are not held up.
    func flushCommitted(epoch: UInt64) {
        let grown = state.withLock { $0.layers.commit(of: epoch) }?.grown()
        state.withLock { $0.layers.flushCommitted(epoch: epoch, durable: grown) }
    }

    /// Seals finished days and drops what falls outside the window or the budget, on a copy. While events are
    /// arriving, a day sealed before waits until its open part is a twentieth of its sealed part (`resealShare`);
    /// once nothing is pending, every day is sealed.
    func maintain(today: Int64) {
        let (durable, epoch, idle) = state.withLock { ($0.layers.durable, $0.layers.epoch, $0.layers.isIdle) }
        var copy = durable
        let (sealed, dropped) = trim(&copy, today: today, minimumOpenFraction: idle ? 0 : Self.resealShare)
        guard sealed > 0 || dropped > 0 else { return }
        state.withLock {
            guard $0.layers.replaceDurable(with: copy, ifStillAt: epoch) else { return }
            $0.statistics.daysSealed += sealed
            $0.statistics.daysDropped += dropped
        }
    }

    /// The one rule for what is kept: days before yesterday sealed, then the retained window and the budget.
    /// Returns the days sealed and dropped.
    func trim(_ memory: inout CubeMemory, today: Int64, minimumOpenFraction: Double = 0) -> (sealed: Int, dropped: Int) {
        let sealed = memory.seal(daysBefore: today - 1, minimumOpenFraction: minimumOpenFraction)
        let dropped = memory.retain(fromDay: configuration.firstRetainedDay(today: today), budgetBytes: configuration.budgetBytes)
        return (sealed, dropped.count)
    }

    /// Which sources answered a query.
    enum Source {
        case memory, memoryAndPostgres, postgres
        /// `AnswerCache`: an answer kept, made from memory (and PostgreSQL before the horizon) earlier.
        case cache
        /// Another instance, which holds the query's artist in memory.
        case forwarded
    }

    func record(_ source: Source) {
        state.withLock {
            switch source {
            case .memory: $0.statistics.answeredFromMemory += 1
            case .memoryAndPostgres: $0.statistics.answeredFromMemoryAndPostgres += 1
            case .postgres: $0.statistics.answeredFromPostgres += 1
            case .cache: $0.statistics.answeredFromCache += 1
            case .forwarded: $0.statistics.forwarded += 1
            }
        }
    }

    func recordForwardFailure() {
        state.withLock { $0.statistics.forwardFailures += 1 }
    }

    /// The partitions memory holds whole (none before a snapshot is installed).
    var loadedPartitions: Set<TopicPartition> {
        state.withLock { $0.layers.loaded }
    }

    var isComplete: Bool { state.withLock { $0.layers.complete } }

    /// Whether memory holds exactly the `owned` partitions (not empty) whole: nothing to load.
    func isLoaded(_ owned: Set<TopicPartition>) -> Bool {
        state.withLock { $0.layers.loaded == owned }
    }
}
