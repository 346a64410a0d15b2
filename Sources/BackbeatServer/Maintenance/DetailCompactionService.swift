import BackbeatStore
import Logging
import ServiceLifecycle

/// Merges the full-dimension tables' and the sketches' deltas into their rows, or many small ones into one delta
/// (`Store.compactDetail`, `DetailCompactionBounds`, migration 0032), a pass every `interval` (a second), each pass at
/// most `rounds` (two) transactions of `limit` artist-days a table: flushes append their detail as deltas, which cost
/// what arrived, and this keeps the deltas few beside each row, at a pace that leaves the cores to the requests.
/// Every instance runs it; two passes share nothing they would both merge (the deltas a pass takes are gone for the
/// other). A failure is logged and the next pass tries again.
public struct DetailCompactionService: Service {
    let store: Store
    let logger: Logger
    let interval: Duration
    let limit: Int
    let rounds: Int
    let metrics: ServiceMetrics?

    public init(
        store: Store, logger: Logger, interval: Duration = .seconds(1), limit: Int = 16, rounds: Int = 2, metrics: ServiceMetrics? = nil
    ) {
        self.store = store
        self.logger = logger
        self.interval = interval
        self.limit = limit
        self.rounds = rounds
        self.metrics = metrics
    }

    /// How long one pass is awaited (as `MaintenanceService.passLimit`).
    static let passLimit: Duration = .seconds(120)

    /// How long a stop waits for the pass in flight once cancelled: a pass's transaction, its COPY included, takes
    /// well under a second unless it waits for PostgreSQL.
    static let stopGrace: Duration = .seconds(2)

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            guard await pass() != nil else { return }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One pass: the artist-days it merged (0 when maintenance held its lock, or when it failed, which is logged);
    /// nil when the service is stopping.
    @discardableResult
    func pass() async -> Int? {
        do {
            // A stop cancels the pass in flight and gives it `stopGrace` to end: given up at once, its COPY went on
            // as the stop closed the pool (`OffsetGapTests` saw postgres-nio end the process); awaited to its end, a
            // pass waiting for a connection PostgreSQL refused, or for a lock, held the stop (`PostgresOutageTests`).
            let merged = try await awaitTask(limit: Self.passLimit, stopGrace: Self.stopGrace) { [store, limit, rounds] in
                // Days before UTC today - 2 are past every zone's yesterday and get late events only.
                let bounds = DetailCompactionBounds(quietBefore: IngestService.today() - 2)
                return try await store.compactDetail(bounds: bounds, limit: limit, rounds: rounds)
            } ?? 0
            if merged > 0 { metrics?.recordDetailCompacted(artistDays: merged) }
            return merged
        } catch where Task.isCancelled || Task.isShuttingDownGracefully {
            return nil
        } catch {
            logger.warning("compaction of the detail's deltas failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
            return 0
        }
    }
}
