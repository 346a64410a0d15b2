import BackbeatCore
import Synchronization

/// This instance's in-memory cubes, as the queries and the upkeep see them: the layers (`MemoryLayers`: durable, in
/// flight and pending) live in the ingest's one state (`SharedIngestState`), which applies the ingest's changes to
/// them in its order; this reads them, runs the upkeep that works on a copy outside the lock (a commit's addition,
/// sealing and trimming), and counts how queries were answered.
///
/// Queries see the layers as of the last change applied, a few milliseconds behind the ledger at most, and never an
/// event in two layers: a flush's start applies what is queued before its batch leaves `pending`.
final class LiveMemory: Sendable {
    /// Counters of how queries were answered (the queries' own, not the ingest's state).
    struct Answers: Sendable {
        var fromMemory = 0
        var fromMemoryAndPostgres = 0
        var fromPostgres = 0
        /// Dashboard answers served from `AnswerCache` (kept, or made by another request meanwhile): read nowhere.
        var fromCache = 0
        /// Artist queries sent to the instance that holds the artist in memory, and answered there.
        var forwarded = 0
        /// Forwarded queries the other instance did not answer (in time), answered here instead.
        var forwardFailures = 0
    }

    /// Open cells per sealed cell at which a sealed day is sealed again while events arrive. Open cells cost about
    /// 28 times the bytes of sealed ones, so this bounds a day's open part to some 1.4 times its sealed bytes. During
    /// a backlog spread over many days each flush opens every one of them, and each commit copies the open parts it
    /// grows: at a quarter, serve's peak on the bench's 1M events was 267-296 MB; at a twentieth 231-249 MB, at the
    /// same speed (docs/performance.md). Resealing a day after each late event would cost the flush loop a re-encoding
    /// of every day touched per flush.
    static let resealShare = 0.05

    let configuration: MemoryConfiguration
    /// The ingest's one state, where the layers live.
    let ingest: SharedIngestState
    private let answers = Mutex(Answers())

    /// `ingest`: a state made with memory (`IngestState(memory: true)`).
    init(configuration: MemoryConfiguration, ingest: SharedIngestState) {
        self.configuration = configuration
        self.ingest = ingest
    }

    /// The layers as they are now; queries read this copy without holding any lock.
    func snapshot() -> MemoryLayers {
        ingest.read { $0.layers ?? MemoryLayers() }
    }

    var answerCounts: Answers { answers.withLock { $0 } }

    /// `MemoryLayers.stamps(of:days:)` of the layers as they are now.
    func stamps(of artist: String, days: Range<Int64>) -> ArtistVersions.Stamps? {
        ingest.read { $0.layers?.stamps(of: artist, days: days) }
    }

    /// Day buckets held in the durable layer and bytes held by all layers, counted under the lock: a snapshot held
    /// while a poll's additions arrive would make them copy the pending layers they add to.
    func footprint() -> (daysHeld: Int, bytes: Int) {
        ingest.read { ($0.layers?.daysHeld ?? 0, $0.layers?.byteCount ?? 0) }
    }

    // MARK: - Called by the flush loop only (the one writer of `durable` besides an install)

    /// What the commit of the flush that took `flight` adds up: the durable layer grown by the in-flight cubes,
    /// added on a copy outside the lock so that queries and polls are not held up (nil when an install or a rebuild
    /// happened since the flush started). Hand it to `IngestState.flushCommitted`.
    func grownByCommit(of flight: MemoryLayers.Flight, funnel: InternedDelta?) -> CubeMemory? {
        ingest.read { $0.layers?.commit(of: flight.epoch) }?.grown(adding: funnel)
    }

    /// Seals finished days and drops what falls outside the window or the budget, on a copy. While events are
    /// arriving, a day sealed before waits until its open part is a twentieth of its sealed part (`resealShare`);
    /// once nothing is pending, every day is sealed.
    func maintain(today: Int64) {
        // Only the durable layer is copied: a copy of the pending one would make the next poll's additions copy it.
        guard let (durable, epoch, idle) = ingest.read({ state in state.layers.map { ($0.durable, $0.epoch, $0.isIdle) } }) else { return }
        var copy = durable
        let (sealed, dropped) = trim(&copy, today: today, minimumOpenFraction: idle ? 0 : Self.resealShare)
        guard sealed > 0 || dropped > 0 else { return }
        ingest.change { $0.replaceDurable(with: copy, ifStillAt: epoch, sealedDays: sealed, droppedDays: dropped) }
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
        answers.withLock {
            switch source {
            case .memory: $0.fromMemory += 1
            case .memoryAndPostgres: $0.fromMemoryAndPostgres += 1
            case .postgres: $0.fromPostgres += 1
            case .cache: $0.fromCache += 1
            case .forwarded: $0.forwarded += 1
            }
        }
    }

    func recordForwardFailure() {
        answers.withLock { $0.forwardFailures += 1 }
    }

    /// The partitions memory holds whole (none before a snapshot is installed).
    var loadedPartitions: Set<TopicPartition> {
        ingest.read { $0.layers?.loaded ?? [] }
    }

    var isComplete: Bool { ingest.read { $0.layers?.complete ?? false } }

    /// Whether memory holds exactly the `owned` partitions (not empty) whole: nothing to load.
    func isLoaded(_ owned: Set<TopicPartition>) -> Bool {
        ingest.read { $0.layers?.loaded == owned }
    }
}
