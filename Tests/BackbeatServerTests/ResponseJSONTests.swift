@testable import BackbeatServer
import Foundation
import NIOCore
import Testing

/// The dashboard answers written by `JSONWriter` say exactly what Foundation's `JSONEncoder` says of them: the same
/// members and values (compared parsed, keys sorted), strings that need escaping, numbers of every shape and absent
/// optionals included.
@Suite struct ResponseJSONTests {
    static let awkward = ["plain", "quote \" and \\ backslash", "new\nline\ttab\r", "\u{01}\u{1f} control", "é ü 🎵 ☃", "/slash/", ""]
    static let shares: [Double] = [0, 1, 0.5, 0.1234, 1e-5, 0.3333, 12.5, -3.75]

    @Test func everyAnswerWritesWhatJSONEncoderWrites() throws {
        for (index, text) in Self.awkward.enumerated() {
            let share = Self.shares[index % Self.shares.count]
            let number = Int64(index) * 1_234_567_890_123 - 7
            let listeners: Int64? = index.isMultiple(of: 2) ? nil : number
            try Self.same(StreamsResponse(
                series: [StreamsPoint(period_start: text, streams: number, skips: -number, listening_ms: 0, listeners: listeners),
                         StreamsPoint(period_start: "2026-10-01T00:00:00Z", streams: 1, skips: 2, listening_ms: 3, listeners: 4)],
                totals: StreamsTotals(streams: number, skips: 1, listening_ms: 2, listeners: listeners)))
            try Self.same(PlatformsResponse(platforms: [PlatformShare(platform: text, streams: number, share: share)]))
            try Self.same(DemographicsResponse(
                age_ranges: [DimensionShare(name: "age_range", value: text, streams: number, share: share)],
                genders: [], countries: [DimensionShare(name: "country", value: "SE", streams: 1, share: 1)]))
            try Self.same(TopTracksResponse(tracks: [TrackStreams(track_id: text, streams: number, listeners: listeners)]))
            try Self.same(RevenueResponse(
                series: [RevenuePoint(period_start: text, source: "stream", currency: "EUR", amount: "-12.345678")],
                totals: [CurrencyTotal(currency: text, amount: "0.000001")]))
            try Self.same(SocialResponse(
                series: [SocialPoint(period_start: "p", platform: text, action: "follow", count: number)],
                totals: [SocialTotal(platform: text, action: "unfollow", count: -number)]))
            try Self.same(PageResponse(
                series: [PagePoint(period_start: text, PageCounts(views: number, section_views: 1, interactions: 0, cta_clicks: -number))],
                totals: PageCounts(views: number, section_views: 2, interactions: 3, cta_clicks: 4),
                counts_unavailable: index.isMultiple(of: 2) ? nil : text))
            try Self.same(PageSectionsResponse(
                sections: [PageSectionViews(section_id: text, views: number)], blocks: [PageBlockInteractions(block_id: text, interactions: 1)],
                interactions: [PageInteraction(block_type: text, action: "play", events: number)]))
            try Self.same(PageSourcesResponse(
                referrers: [PageReferrerViews(referrer: text, views: number)], countries: [PageCountryViews(country: text, views: -1)],
                counts_unavailable: index.isMultiple(of: 2) ? nil : text))
            let stages = PageFunnelStages([.integer(number), .integer(1), .integer(-number)])
            try Self.same(PageFunnelResponse(
                series: [PageFunnelPoint(period_start: text, stages)], totals: stages, counts_unavailable: index.isMultiple(of: 2) ? text : nil))
            try Self.same(PageCTAsResponse(
                series: [PageCTAPoint(period_start: "p", action_type: text, clicks: number)], totals: [PageCTATotal(action_type: text, clicks: -number)]))
            try Self.same(SummaryRoute<BackbeatRequestContext>.SummaryResponse(
                artist_id: text, as_of: "2026-10-11", monthly_listeners: number, streams_28d: 1, streams_prev_28d: 2,
                growth_percent: index.isMultiple(of: 2) ? nil : share * 100, revenue_this_month: [CurrencyTotal(currency: "USD", amount: "1")],
                net_followers_28d: -number))
        }
        try Self.same(StreamsResponse(series: [], totals: StreamsTotals(streams: 0, skips: 0, listening_ms: 0, listeners: nil)))
        for number: Int64 in [.max, .min, .min + 1, -1, 9, 10, 99, 100, 1_000_000_007] {
            try Self.same(SocialResponse(series: [], totals: [SocialTotal(platform: "x", action: "like", count: number)]))
        }
    }

    static func same(_ answer: some JSONWritable & Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let written = EncodedAnswer.written(answer)
        let encoded = try JSONEncoder().encode(answer)
        let ours = try canonical(Data(written.readableBytesView))
        #expect(ours == (try canonical(encoded)), "\(String(buffer: written))", sourceLocation: sourceLocation)
    }

    static func canonical(_ data: Data) throws -> String {
        let object = try JSONSerialization.jsonObject(with: data)
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
