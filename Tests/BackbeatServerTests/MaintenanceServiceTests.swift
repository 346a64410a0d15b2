import BackbeatCore
import BackbeatStore
import Foundation
import PostgresNIO
import Testing

@testable import BackbeatServer

/// The store's upkeep counts each pass by what it did (`backbeat_maintenance_passes_total`) and the months it
/// handled (`backbeat_maintenance_months_total`): a pass with ended months to roll works, the one after it has
/// nothing left to do. What an operator (and scripts/bench) waits for after a replay of many months.
@Suite struct MaintenanceServiceTests {
    @Test func aPassCountsWhatItDidAndThePassAfterItIsIdle() async throws {
        // RouteTests' events fall on 2026-10-01 to 10-10: on 2026-12-15, October and November have ended (month rows),
        // and with 30 days of detail kept, October's hourly detail is rolled into daily rows.
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            let metrics = ServiceMetrics()
            let maintenance = MaintenanceService(
                store: store, retention: RetentionSettings(detailDays: 30), logger: RouteTests.logger, metrics: metrics)
            let today = CivilDate(year: 2026, month: 12, day: 15).daysSinceEpoch
            let octoberDetail = Cube.all.filter(\.isFull).map { "\($0.table)_days_2026_10" }
            func present() async throws -> Int {
                var count = 0
                for partition in octoberDetail {
                    for try await found in try await store.client.query("SELECT to_regclass(\(partition)) IS NOT NULL").decode(Bool.self) where found {
                        count += 1
                    }
                }
                return count
            }
            let rolled = try await present()
            #expect(rolled > 0)
            #expect(await maintenance.pass(today: today) == .worked)
            #expect(await maintenance.pass(today: today) == .idle)
            let text = String(decoding: metrics.exposition(), as: UTF8.self)
            #expect(text.contains(#"backbeat_maintenance_passes_total{outcome="worked"} 1"#), "\(text)")
            #expect(text.contains(#"backbeat_maintenance_passes_total{outcome="idle"} 1"#))
            #expect(text.contains(#"backbeat_maintenance_months_total{work="detail_rolled"} \#(rolled)"#))
            #expect(try await present() == 0)
            #expect(text.range(of: #"backbeat_maintenance_months_total\{work="month_rows"\} [1-9]"#, options: .regularExpression) != nil)
            #expect(!text.contains(#"work="dropped""#))
        }
    }
}
