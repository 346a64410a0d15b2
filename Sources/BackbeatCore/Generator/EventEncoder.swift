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
        case .page(let e):
            string("event_id", e.eventID)
            switch e.kind {
            case .portfolioView(let category):
                string("type", EventTypeName.portfolioView.rawValue)
                string("category", category)
            case .sectionView(let sectionID):
                string("type", EventTypeName.sectionView.rawValue)
                string("section_id", sectionID)
            case .blockInteraction(let blockID, let blockType, let action):
                string("type", EventTypeName.blockInteraction.rawValue)
                string("block_id", blockID)
                string("block_type", blockType)
                string("action", action)
            case .ctaClick(let actionType):
                string("type", EventTypeName.ctaClick.rawValue)
                string("action_type", actionType)
            }
            string("occurred_at", RFC3339.format(e.occurredAt))
            string("artist_id", e.artistID)
            string("visitor_id", e.visitorID)
            string("portfolio_id", e.portfolioID)
            string("session_id", e.sessionID)
            if e.country != "ZZ" { string("country", e.country) }
            // The host stands for the URL it was read from (a URL without a scheme reads as its host).
            if e.referrer != PageEvent.directReferrer { string("referrer", e.referrer == PageEvent.unknownReferrer ? "mailto:x@y" : e.referrer) }
            if !e.properties.isEmpty {
                fields.append(("properties", "{" + e.properties.map { JSONString.quoted($0.key) + ":" + JSONString.quoted($0.value) }.joined(separator: ",") + "}"))
            }
        }
        return "{" + fields.map { JSONString.quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
