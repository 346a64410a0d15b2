import BackbeatCore
import BackbeatStore
import Logging
import ServiceLifecycle

/// The store's upkeep, once a minute from the start: each ended month rolled into month rows (`Store.rollMonths`),
/// then retention applied (`Store.applyRetention`): months of hourly detail past `RetentionSettings.detailDays`
/// rolled into daily rows, months past `cubeMonths` dropped. A failure is logged and tried again a minute later.
/// Each pass is counted by what it did (`backbeat_maintenance_passes_total`): after a replay or a rebuild of many
/// months, an `idle` pass says the upkeep has caught up.
public struct MaintenanceService: Service {
    let store: Store
    let retention: RetentionSettings
    let logger: Logger
    let interval: Duration
    let metrics: ServiceMetrics?

    public init(store: Store, retention: RetentionSettings, logger: Logger, interval: Duration = .seconds(60), metrics: ServiceMetrics? = nil) {
        self.store = store
        self.retention = retention
        self.logger = logger
        self.interval = interval
        self.metrics = metrics
    }

    /// What a pass did: nothing left to do (`idle`), some months rolled or dropped (`worked`), or it failed.
    enum PassOutcome: String {
        case idle, worked, failed
    }

    /// How long one pass is awaited. A statement that went out as its connection broke has been seen never to
    /// return (postgres-nio 1.33.2): waiting for it would end retention for good, and hang the stop.
    static let passLimit: Duration = .seconds(600)

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await pass(today: Timestamp.wallClock().daysSinceEpoch)
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One pass as of the UTC day `today`; nil when the service is stopping.
    @discardableResult
    func pass(today: Int64) async -> PassOutcome? {
        do {
            // A stop does not wait for a pass: it acts on whole months, one transaction each, and the next start goes on.
            let (months, outcome) = try await awaitTask(limit: Self.passLimit, stopGrace: .zero) { [store, retention] in
                let months = try await store.rollMonths(today: today)
                let outcome = try await store.applyRetention(
                    detailKeptFrom: retention.detailKeptFrom(today: today), cubesKeptFrom: retention.cubesKeptFrom(today: today))
                return (months, outcome)
            }
            if !months.rolled.isEmpty {
                logger.notice("months rolled into month rows", metadata: ["months": "\(months.rolled.map { RFC3339.formatDate(CivilDate(daysSinceEpoch: $0)) }.joined(separator: ","))"])
            }
            if !outcome.rolled.isEmpty || !outcome.dropped.isEmpty {
                logger.notice("retention: months rolled into daily rows or dropped", metadata: [
                    "rolled": "\(outcome.rolled.joined(separator: ","))", "dropped": "\(outcome.dropped.joined(separator: ","))"])
            }
            let worked = !months.rolled.isEmpty || !outcome.rolled.isEmpty || !outcome.dropped.isEmpty
            metrics?.recordMaintenancePass(
                outcome: worked ? PassOutcome.worked.rawValue : PassOutcome.idle.rawValue,
                months: ["month_rows": months.rolled.count, "detail_rolled": outcome.rolled.count, "dropped": outcome.dropped.count])
            return worked ? .worked : .idle
        } catch where Task.isCancelled || Task.isShuttingDownGracefully {
            return nil
        } catch {
            logger.warning("maintenance failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
            metrics?.recordMaintenancePass(outcome: PassOutcome.failed.rawValue, months: [:])
            return .failed
        }
    }
}
