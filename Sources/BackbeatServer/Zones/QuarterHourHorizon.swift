import BackbeatStore
import Synchronization

/// The first local day whose full-dimension rows are all by quarter hour (`Store.quarterHourDetailFrom`), which a
/// read in another zone by quarter hours needs: read from PostgreSQL the first time such a read asks, then kept
/// (migration 0025 sets it once).
final class QuarterHourHorizon: Sendable {
    private let store: Store
    private let known = Mutex<Int64?>(nil)

    init(store: Store) {
        self.store = store
    }

    /// Days since the epoch; `Int64.min` when every day is by quarter hour.
    func firstDay() async throws -> Int64 {
        if let day = known.withLock({ $0 }) { return day }
        let day = try await store.quarterHourDetailFrom()
        known.withLock { $0 = day }
        return day
    }
}
