import BackbeatCore
import BackbeatStore
import Logging
import ServiceLifecycle

/// The store's upkeep, once a minute from the start: each ended month rolled into month rows (`Store.rollMonths`),
/// then retention applied (`Store.applyRetention`): months of hourly detail past `RetentionSettings.detailDays`
/// rolled into daily rows, months past `cubeMonths` dropped. A failure is logged and tried again a minute later.
public struct MaintenanceService: Service {
    let store: Store
    let retention: RetentionSettings
    let logger: Logger
    let interval: Duration

    public init(store: Store, retention: RetentionSettings, logger: Logger, interval: Duration = .seconds(60)) {
        self.store = store
        self.retention = retention
        self.logger = logger
        self.interval = interval
    }

    /// How long one pass is awaited. A statement that went out as its connection broke has been seen never to
    /// return (postgres-nio 1.33.2): waiting for it would end retention for good, and hang the stop.
    static let passLimit: Duration = .seconds(600)

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await applyOnce()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    private func applyOnce() async {
        let today = Timestamp.wallClock().daysSinceEpoch
        do {
            // A stop does not wait for a pass: it acts on whole months, one transaction each, and the next start goes on.
            let (months, outcome) = try await awaitTaskUnlessStopping(limit: Self.passLimit) { [store, retention] in
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
        } catch where Task.isCancelled || Task.isShuttingDownGracefully {
            return
        } catch {
            logger.warning("maintenance failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
