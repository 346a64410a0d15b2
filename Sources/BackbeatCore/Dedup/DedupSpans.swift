/// How long each event family's `event_id`s are remembered, in seconds of event time: a resend later than that is
/// counted again (and counted as `beyondWindow`). Streams and page events are resent within hours (an offline queue,
/// a retried beacon); revenue and social reports are restated within weeks.
public struct DedupSpans: Equatable, Sendable {
    public var stream: Int64
    public var revenue: Int64
    public var social: Int64
    public var page: Int64

    public init(stream: Int64, revenue: Int64, social: Int64, page: Int64 = 48 * 3600) {
        self.stream = stream
        self.revenue = revenue
        self.social = social
        self.page = page
    }

    /// 48 hours for streams and page events, 30 days for revenue and social.
    public static let standard = DedupSpans(stream: 48 * 3600, revenue: 30 * 86400, social: 30 * 86400, page: 48 * 3600)

    /// The span of `record`'s family.
    public func span(of record: EventRecord) -> Int64 {
        switch record.details {
        case .stream: stream
        case .revenue: revenue
        case .social: social
        case .page: page
        }
    }
}
