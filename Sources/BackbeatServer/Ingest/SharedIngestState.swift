import BackbeatCore
import Dispatch
import Synchronization

/// The ingest's one state (`IngestState`: the ledger, the in-memory layers, offsets and ownership) behind its one
/// lock, shared by the ingest's services and the queries.
///
/// Transitions run through `change`. The changes a transition queues for the in-memory layers are applied one at a
/// time, each under the lock, by a serial queue of its own (`applying`): the polling thread hands a poll's deltas
/// over and polls on while the cubes are added up on the other core. Each change queued is matched by one job on
/// that queue, which applies the oldest change still queued (if a flush's start or an install applied them first,
/// it finds none), so every change is applied by the time the jobs submitted after it have run.
final class SharedIngestState: Sendable {
    private let state: Mutex<IngestState>
    /// Applies the changes queued for the layers, one job per change, in the order queued.
    private let applying = DispatchQueue(label: "backbeat.memory.changes")
    /// Changes queued and not yet applied beyond which the polling thread applies one itself (`keepUp`).
    static let backlogLimit = 4

    init(_ state: IngestState) {
        self.state = Mutex(state)
    }

    /// Reads the state under its lock.
    func read<Result>(_ body: (borrowing IngestState) -> Result) -> Result {
        state.withLock { body($0) }
    }

    /// Runs `transition` on the state under its lock, then schedules the application of the changes it queued for
    /// the layers.
    @discardableResult
    func change<Result>(_ transition: (inout IngestState) -> Result) -> Result {
        let (result, queued) = state.withLock { state in
            let before = state.queuedMemoryChanges.count
            let result = transition(&state)
            return (result, state.queuedMemoryChanges.count - before)
        }
        for _ in 0..<max(queued, 0) {
            applying.async { [self] in applyOldest() }
        }
        return result
    }

    /// Applies the oldest change queued. A change that rebuilds the pending layer (a revocation or a failed flush
    /// that dropped unflushed work) has the layer made outside the lock first, so that polls and rebalance callbacks
    /// wait for the lock only while the layer is swapped in, not while up to `--pending-limit` of work is added up.
    private func applyOldest() {
        // Most changes are a poll's: applied under one taking of the lock.
        let rebuild = state.withLock { state in
            let rebuild = state.nextMemoryRebuild()
            if rebuild == nil { state.applyNextMemoryChange() }
            return rebuild
        }
        guard let rebuild else { return }
        let rebuilt = MemoryLayers.Rebuilt(from: rebuild.unflushed)
        state.withLock { _ = $0.applyNextMemoryChange(rebuilt: (rebuild.sequence, rebuilt)) }
    }

    /// Called by the polling thread after each poll: while more than `backlogLimit` changes wait, it applies the
    /// oldest itself, so what it hands over is bounded by what the other core adds up.
    func keepUp() {
        while state.withLock({ $0.queuedMemoryChanges.count }) > Self.backlogLimit {
            applyOldest()
        }
    }

    /// Returns once every change queued before the call has been applied.
    func settled() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            applying.async { done.resume() }
        }
    }
}
