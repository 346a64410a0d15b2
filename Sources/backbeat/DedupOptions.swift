import ArgumentParser
import BackbeatCore

/// The dedup options `serve` and `replay` share: whether resent events are told from new ones, and for how long of
/// event time each family's ids are remembered (docs/events.md, "Resent events").
struct DedupOptions: ParsableArguments {
    @Option(name: .customLong("dedup"), help: "on: an event whose event_id was counted within its window is not counted again (a resend), and one with other fields is rejected (conflicting_event_id); off: every valid message is counted (env BACKBEAT_DEDUP; default on).")
    var dedup: String?

    @Option(name: .customLong("dedup-stream-window"), help: "How long of event time stream event ids are remembered, such as 48h or 2d (env BACKBEAT_DEDUP_STREAM_WINDOW; default 48h).")
    var streamWindow: String?

    @Option(name: .customLong("dedup-revenue-window"), help: "How long of event time revenue event ids are remembered (env BACKBEAT_DEDUP_REVENUE_WINDOW; default 30d).")
    var revenueWindow: String?

    @Option(name: .customLong("dedup-social-window"), help: "How long of event time social event ids are remembered (env BACKBEAT_DEDUP_SOCIAL_WINDOW; default 30d).")
    var socialWindow: String?

    @Option(name: .customLong("dedup-page-window"), help: "How long of event time page event ids are remembered (env BACKBEAT_DEDUP_PAGE_WINDOW; default 48h).")
    var pageWindow: String?

    /// The spans to remember ids for (nil: dedup off).
    func spans() throws -> DedupSpans? {
        let enabled = try setting(dedup, "BACKBEAT_DEDUP", default: "on", name: "--dedup", expected: "on or off") {
            ["on": true, "off": false][$0]
        }
        guard enabled else { return nil }
        let expected = "a span of event time such as 48h, 30d or 3600s"
        return DedupSpans(
            stream: try setting(streamWindow, "BACKBEAT_DEDUP_STREAM_WINDOW", default: "48h", name: "--dedup-stream-window",
                                expected: expected, parseSpanSeconds),
            revenue: try setting(revenueWindow, "BACKBEAT_DEDUP_REVENUE_WINDOW", default: "30d", name: "--dedup-revenue-window",
                                 expected: expected, parseSpanSeconds),
            social: try setting(socialWindow, "BACKBEAT_DEDUP_SOCIAL_WINDOW", default: "30d", name: "--dedup-social-window",
                                expected: expected, parseSpanSeconds),
            page: try setting(pageWindow, "BACKBEAT_DEDUP_PAGE_WINDOW", default: "48h", name: "--dedup-page-window",
                              expected: expected, parseSpanSeconds))
    }
}

/// Parses a span of whole seconds above zero: a number with an s, m, h or d suffix (`48h`, `30d`), at most 10 years.
func parseSpanSeconds(_ text: String) -> Int64? {
    let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
    guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0,
          count <= 3650 * 86400 / unit else { return nil }
    return count * unit
}
