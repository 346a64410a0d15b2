/// A session of the page funnel by its ids, as PostgreSQL keys it (`page_funnel_sessions`).
public struct SessionKey: Hashable, Sendable {
    public var artistID: String
    public var portfolioID: String
    public var sessionID: String

    public init(artistID: String, portfolioID: String, sessionID: String) {
        self.artistID = artistID
        self.portfolioID = portfolioID
        self.sessionID = sessionID
    }

    /// Whether `self` is written before `other` (by artist, portfolio, session: every writer's one order).
    public func precedes(_ other: SessionKey) -> Bool {
        (artistID, portfolioID, sessionID) < (other.artistID, other.portfolioID, other.sessionID)
    }
}
