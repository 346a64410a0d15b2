@testable import BackbeatCore
import BackbeatTestSupport
import Testing

/// A series laid out in its grid of periods and groups is what zero-filling and sorting every row gives: random
/// series by hour, day, week and month, with and without groups and limits, some rows missing and some groups absent
/// from some periods; and rows the grid cannot place (two of one period and group, a period outside the interval)
/// are still shaped, by sorting.
@Suite struct ResultShaperTests {
    @Test(.seeded) func aLaidOutSeriesIsTheSortedOne() throws {
        var random = TestRandom()
        let values = ["spotify", "apple", "Äpfel", "a", "ab", "B", "youtube", "", "zz", "follow", "like"]
        for round in 0..<400 {
            var builder = QueryBuilder()
            builder.dataset = ["streams", "social"].randomElement(using: &random)!
            builder.granularity = ["hour", "day", "week", "month"].randomElement(using: &random)!
            builder.from = "2026-0\(Int.random(in: 1...3, using: &random))-1\(Int.random(in: 0...9, using: &random))"
            builder.to = "2026-0\(Int.random(in: 4...5, using: &random))-0\(Int.random(in: 1...9, using: &random))"
            if builder.granularity == "hour" { (builder.from, builder.to) = ("2026-03-\(Int.random(in: 10...20, using: &random))", "2026-03-22") }
            let dimensions = builder.dataset == "social" ? ["platform", "action"] : ["platform"]
            builder.groupBy = Array(dimensions.prefix(Int.random(in: 0...dimensions.count, using: &random)))
            if Int.random(in: 0..<4, using: &random) == 0 { builder.limit = String(Int.random(in: 1...30, using: &random)) }
            let query = try builder.build()
            let periods = query.granularity.periods(covering: query.interval)
            let metrics = query.dataset.metrics.count
            var rows: [QueryRow] = []
            var taken: Set<[String]> = []
            for _ in 0..<Int.random(in: 0...60, using: &random) {
                let group = builder.groupBy.map { _ in values.randomElement(using: &random)! }
                let period = periods.randomElement(using: &random)!
                guard taken.insert([RFC3339.format(period)] + group).inserted else { continue }
                rows.append(QueryRow(periodStart: period, groupValues: group,
                                     metrics: (0..<metrics).map { _ in .integer(Int64.random(in: 0...9, using: &random)) }))
            }
            rows.shuffle(using: &random)
            #expect(try ResultShaper.shape(rows, for: query) == ResultShaper.shapeBySorting(rows, for: query), "round \(round): \(builder)")

            // Rows the grid cannot place: shaped all the same, every row kept.
            guard let some = rows.first else { continue }
            var twice = rows
            twice.append(some)
            #expect(try ResultShaper.shape(twice, for: query) == ResultShaper.shapeBySorting(twice, for: query))
            var outside = rows
            outside.append(QueryRow(periodStart: Timestamp(seconds: query.interval.to.seconds + 86_400 * 40), groupValues: some.groupValues, metrics: some.metrics))
            #expect(try ResultShaper.shape(outside, for: query) == ResultShaper.shapeBySorting(outside, for: query))
        }
    }
}
