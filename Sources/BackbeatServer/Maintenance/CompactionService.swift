import BackbeatStore
import Logging
import ServiceLifecycle

/// Moves flushed rows from the append-only `_delta` tables into the merged ones (`Store.compact`) every `interval`,
/// and once more on shutdown, after ingest's final flush (services stop in reverse order).
///
/// Flushes only append, so this keeps the deltas that readers scan beside the merged tables short. A failure is
/// logged and tried again at the next interval: nothing is lost, the rows wait in the delta tables meanwhile.
public struct CompactionService: Service {
    let store: Store
    let interval: Duration
    let logger: Logger

    public init(store: Store, interval: Duration = .seconds(5), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            await compactOnce()
        }
    }

    /// How long one round is awaited. A large round (millions of delta rows after a long catch-up) takes minutes;
    /// a round whose statement went out as its connection broke has been seen never to return (postgres-nio 1.33.2),
    /// and waiting for it would end compaction for good, and hang the stop.
    static let roundLimit: Duration = .seconds(600)

    private func compactOnce() async {
        let started = ContinuousClock.now
        do {
            let moved = try await awaitTask(limit: Self.roundLimit) { [store] in try await store.compact() }
            if moved > 0 {
                logger.debug("compacted", metadata: ["rows": "\(moved)", "duration": "\(ContinuousClock.now - started)"])
            }
        } catch where Task.isCancelled {
            logger.notice("compaction cut short by the stop; the rows wait in the delta tables")
        } catch let timedOut as WaitTimedOut {
            // Its transaction, if the server still runs it, holds the compaction lock: later rounds skip until it ends.
            logger.warning("compaction round abandoned; the next round starts over", metadata: ["error": "\(timedOut)"])
        } catch {
            logger.warning("compaction failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
