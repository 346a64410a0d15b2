/// Writes events as the JSON the event contract describes (used by the generator and by tests).
public enum EventEncoder {
    /// The JSON object for `event`. Amounts are written as a string, or as a JSON number when `amountAsNumber`.
    public static func json(_ event: Event, amountAsNumber: Bool = false) -> String {
        var fields: [(String, String)] = []
        func string(_ name: String, _ value: String?) {
            if let value { fields.append((name, JSONString.quoted(value))) }
        }
        func number(_ name: String, _ value: Int64?) {
            if let value { fields.append((name, String(value))) }
        }
        switch event {
        case .stream(let e):
            string("event_id", e.eventID)
            string("type", "stream")
            string("occurred_at", RFC3339.format(e.occurredAt))
            string("artist_id", e.artistID)
            string("track_id", e.trackID)
            string("platform", e.platform)
            string("listener_id", e.listenerID)
            if e.country != "ZZ" { string("country", e.country) }
            if e.ageRange != .unknown { string("age_range", e.ageRange.rawValue) }
            if e.gender != .unknown { string("gender", e.gender.rawValue) }
            number("duration_ms", e.durationMs)
        case .revenue(let e):
            string("event_id", e.eventID)
            string("type", "revenue")
            string("occurred_at", RFC3339.format(e.occurredAt))
            string("artist_id", e.artistID)
            string("source", e.source.rawValue)
            let amount = e.amount.decimalString
            if amountAsNumber { fields.append(("amount", amount)) } else { string("amount", amount) }
            string("currency", e.currency)
            string("platform", e.platform)
            string("track_id", e.trackID)
        case .social(let e):
            string("event_id", e.eventID)
            string("type", "social")
            string("occurred_at", RFC3339.format(e.occurredAt))
            string("artist_id", e.artistID)
            string("platform", e.platform)
            string("action", e.action)
            number("count", e.count)
            string("post_id", e.postID)
        }
        return "{" + fields.map { JSONString.quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
