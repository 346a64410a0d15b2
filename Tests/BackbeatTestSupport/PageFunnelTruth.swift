import BackbeatCore

/// The page funnel of a set of page events, computed from the events as docs/events.md words it ("The page funnel"),
/// apart from `FunnelSession`: a session (artist, portfolio, `session_id`) lasts 24 hours from its first event; it
/// counts on the UTC day of its first portfolio view in them, with a section view in them, and then with a CTA click
/// in them too.
public struct PageFunnelTruth: Equatable, Sendable {
    /// artist|portfolio|session -> the seconds of its first event, first view, first section view, first CTA click.
    public var sessions: [String: [Int64?]] = [:]
    /// artist|portfolio|day (YYYY-MM-DD) -> [sessions, with a section view, with a CTA click]
    public var days: [String: [Int64]] = [:]

    public init() {}

    public init(_ events: [PageEvent]) {
        var grouped: [String: [PageEvent]] = [:]
        for event in events {
            guard let session = event.sessionID else { continue }
            grouped[[event.artistID, event.portfolioID, session].joined(separator: "|"), default: []].append(event)
        }
        for (key, events) in grouped {
            let start = events.map(\.occurredAt.seconds).min()!
            func first(_ isStep: (PageEvent.Kind) -> Bool) -> Int64? { events.filter { isStep($0.kind) }.map(\.occurredAt.seconds).min() }
            let view = first { if case .portfolioView = $0 { true } else { false } }
            let section = first { if case .sectionView = $0 { true } else { false } }
            let click = first { if case .ctaClick = $0 { true } else { false } }
            sessions[key] = [start, view, section, click]
            let end = start + 86_400
            guard let view, view < end else { continue }
            let parts = key.split(separator: "|", omittingEmptySubsequences: false)
            let day = RFC3339.formatDate(CivilDate(daysSinceEpoch: view.floorDiv(86_400)))
            let sectioned = section.map { $0 < end } ?? false
            let clicked = sectioned && (click.map { $0 < end } ?? false)
            var counts = days["\(parts[0])|\(parts[1])|\(day)", default: [0, 0, 0]]
            counts[0] += 1
            counts[1] += sectioned ? 1 : 0
            counts[2] += clicked ? 1 : 0
            days["\(parts[0])|\(parts[1])|\(day)"] = counts
        }
    }
}
