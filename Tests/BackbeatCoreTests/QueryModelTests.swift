import BackbeatCore
import Testing

@Suite struct QueryModelTests {
    func builder(_ dataset: String = "streams") -> QueryBuilder {
        var builder = QueryBuilder()
        builder.dataset = dataset
        builder.from = "2026-11-01"
        builder.to = "2026-11-04"
        return builder
    }

    func code(_ builder: QueryBuilder) -> QueryError.Code? {
        do {
            _ = try builder.build()
            return nil
        } catch {
            return error.code
        }
    }

    @Test func rejectsWhatTheModelDoesNotKnow() {
        var b = builder("plays")
        #expect(code(b) == .unknownDataset)
        b = builder(); b.groupBy = ["currency"]
        #expect(code(b) == .unknownDimension)
        b = builder(); b.orderByMetric = "amount"
        #expect(code(b) == .unknownMetric)
        b = builder(); b.filters = [("country", ["se"])]
        #expect(code(b) == .invalidParameter)
        b = builder(); b.filters = [("platform", ["x'; DROP TABLE stream_hourly; --"])]
        #expect(code(b) == .invalidParameter)
        b = builder(); b.limit = "0"
        #expect(code(b) == .invalidParameter)
        b = builder(); b.from = "2026-11-01T10:30:00Z"
        #expect(code(b) == .invalidInterval)
        b = builder(); b.to = "2026-10-01"
        #expect(code(b) == .invalidInterval)
        b = builder(); b.to = nil
        #expect(code(b) == .missingParameter)
        b = builder(); b.from = "2025-01-01"; b.granularity = "hour"
        #expect(code(b) == .tooManyPoints)
        b = builder(); b.from = "2000-01-01"; b.granularity = "month"
        #expect(code(b) == .intervalTooLong)
        b = builder(); b.from = "2016-11-05"; b.granularity = "month"
        #expect(code(b) == nil, "ten years is allowed")
        b = builder("revenue")
        #expect(code(b) == .currencyRequired)
        b = builder("revenue"); b.filters = [("currency", ["EUR"])]
        #expect(code(b) == nil)
    }

    @Test func zeroFillsOrdersAndLimits() throws {
        var b = builder()
        b.granularity = "day"
        b.groupBy = ["platform"]
        let query = try b.build()
        let day2 = RFC3339.parseInstant("2026-11-02")!
        let rows = [
            QueryRow(periodStart: day2, groupValues: ["tidal"], metrics: [.integer(5), .integer(0), .integer(0)]),
            QueryRow(periodStart: day2, groupValues: ["deezer"], metrics: [.integer(2), .integer(1), .integer(0)]),
        ]
        let shaped = try ResultShaper.shape(rows, for: query)
        #expect(shaped.count == 6)
        #expect(shaped.first?.groupValues == ["deezer"])
        #expect(shaped.first.map { RFC3339.format($0.periodStart!) } == "2026-11-01T00:00:00Z")
        #expect(shaped.filter { $0.metrics[0] == .integer(0) }.count == 4)

        var ordered = b
        ordered.orderByMetric = "streams"
        ordered.limit = "1"
        let top = try ResultShaper.shape(rows, for: try ordered.build())
        #expect(top == [rows[0]])
    }

    @Test func emptyTotalsAreZero() throws {
        var b = builder()
        b.granularity = "all"
        let shaped = try ResultShaper.shape([], for: try b.build())
        #expect(shaped == [QueryRow(periodStart: nil, groupValues: [], metrics: [.integer(0), .integer(0), .integer(0)])])
    }
}

@Suite struct CubePlanTests {
    func plan(_ configure: (inout QueryBuilder) -> Void) throws -> String {
        var builder = QueryBuilder()
        builder.dataset = "streams"
        builder.from = "2026-11-01"
        builder.to = "2026-11-29"
        builder.granularity = "day"
        builder.filters = [("artist_id", ["a1"])]
        configure(&builder)
        return Cube.plan(for: try builder.build()).table
    }

    @Test func picksTheSmallestCubeThatHasEveryDimension() throws {
        #expect(try plan { _ in } == "streams_by_artist_day_platform")
        #expect(try plan { $0.groupBy = ["platform"] } == "streams_by_artist_day_platform")
        #expect(try plan { $0.groupBy = ["country"] } == "streams_by_artist_day_country")
        #expect(try plan { $0.groupBy = ["gender"] } == "streams_by_artist_day_demographics")
        #expect(try plan { $0.groupBy = ["track_id"] } == "streams_by_artist_day_track")
        #expect(try plan { $0.groupBy = ["track_id", "platform"] } == "stream_daily")
        #expect(try plan { $0.filters.append(("country", ["SE"])); $0.groupBy = ["age_range"] } == "stream_daily")
        #expect(try plan { $0.dataset = "revenue"; $0.groupBy = ["currency"] } == "revenue_by_artist_day")
        #expect(try plan { $0.dataset = "revenue"; $0.groupBy = ["currency", "platform"] } == "revenue_daily")
        #expect(try plan { $0.dataset = "social"; $0.groupBy = ["action"] } == "social_by_artist_day")
    }

    @Test func hourlyQuestionsNeedAnHourlyCube() throws {
        #expect(try plan { $0.granularity = "hour" } == "streams_by_artist_hour")
        #expect(try plan { $0.from = "2026-11-01T06:00:00Z" } == "streams_by_artist_hour")
        #expect(try plan { $0.granularity = "hour"; $0.groupBy = ["platform"] } == "stream_hourly")
        #expect(try plan { $0.dataset = "social"; $0.granularity = "hour" } == "social_hourly")
    }

    @Test func dayQuestionsOnTheFullDimensionsReadThemByDay() throws {
        let daily = Cube.plan(for: try {
            var builder = QueryBuilder()
            builder.dataset = "streams"
            builder.from = "2026-11-01"
            builder.to = "2026-11-29"
            builder.granularity = "week"
            builder.groupBy = ["track_id", "country"]
            return try builder.build()
        }())
        #expect(daily.table == "stream_daily" && daily.grain == .day && daily.isDailyDetail && !daily.isFull)
        #expect(daily.dimensions == Cube.all.first { $0.table == "stream_hourly" }!.dimensions)
        #expect(!Cube.all.contains { $0.isDailyDetail })
        #expect(!CubeMemory.holds(daily))
    }
}
