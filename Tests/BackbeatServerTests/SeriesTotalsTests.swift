@testable import BackbeatServer
import BackbeatCore
import BackbeatTestSupport
import Testing

/// A series' totals (`ArtistRoutes.totals`) are each group's sum over its rows, whether the rows repeat their groups
/// in one order every period (a zero-filled series: placed by position) or not (placed by their values), for totals
/// grouped as the series is or by fewer of its dimensions.
@Suite struct SeriesTotalsTests {
    @Test(.seeded) func eachGroupsTotalIsTheSumOfItsRows() throws {
        var random = TestRandom()
        let platforms = ["spotify", "apple", "youtube"], actions = ["follow", "like", "share", "unfollow"]
        for round in 0..<300 {
            var builder = QueryBuilder()
            builder.dataset = "social"
            builder.from = "2026-10-01"
            builder.to = "2026-10-0\(Int.random(in: 2...9, using: &random))"
            builder.granularity = "day"
            builder.groupBy = ["platform", "action"]
            let series = try builder.build()
            var totalsBuilder = builder
            totalsBuilder.granularity = "all"
            if Bool.random(using: &random) { totalsBuilder.groupBy = ["action"] }
            let totals = try totalsBuilder.build()
            let periods = series.granularity.periods(covering: series.interval)
            var rows: [QueryRow] = []
            var taken: Set<[String]> = []
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                let group = [platforms.randomElement(using: &random)!, actions.randomElement(using: &random)!]
                let period = periods.randomElement(using: &random)!
                guard taken.insert([RFC3339.format(period)] + group).inserted else { continue }
                rows.append(QueryRow(periodStart: period, groupValues: group, metrics: [.integer(Int64.random(in: 0...99, using: &random))]))
            }
            // Zero-filled (groups repeated each period) in half the rounds; as read, in any order, in the others.
            if Bool.random(using: &random) { rows = try ResultShaper.shape(rows, for: series) } else { rows.shuffle(using: &random) }
            var expected: [[String]: Int64] = [:]
            for row in rows {
                let group = totals.groupBy.map { row.groupValues[series.groupBy.firstIndex(of: $0)!] }
                expected[group, default: 0] += row.metrics[0].integer
            }
            let made = try ArtistRoutes<BackbeatRequestContext>.totals(of: rows, in: series, as: totals)
            #expect(Dictionary(uniqueKeysWithValues: made.map { ($0.groupValues, $0.metrics[0].integer) }) == expected, "round \(round)")
            #expect(made.count == expected.count, "round \(round)")
        }
    }
}
