/// What a visitor did on an artist's portfolio page (docs/events.md, "Page events").
public struct PageEvent: Equatable, Sendable {
    /// The four types of page event, with the fields of each.
    public enum Kind: Equatable, Sendable {
        /// The page was opened; `category` is the page's kind (music, tour, merch, ...).
        case portfolioView(category: String?)
        /// A section of the page came into view.
        case sectionView(sectionID: String)
        /// A block was played, expanded, swiped, ...
        case blockInteraction(blockID: String, blockType: String, action: String)
        /// A call to action was clicked (pre_save, buy_tickets, ...).
        case ctaClick(actionType: String)
    }

    /// One member of `properties`, in the order the message gives them.
    public struct Property: Equatable, Sendable {
        public var key: String
        public var value: String

        public init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }
    }

    /// The `referrer` of a message that gives none.
    public static let directReferrer = "(direct)"
    /// The `referrer` of a message whose referrer has no host to read.
    public static let unknownReferrer = "(unknown)"

    public var eventID: String
    public var occurredAt: Timestamp
    public var artistID: String
    public var visitorID: String
    public var portfolioID: String
    public var sessionID: String?
    /// Absent country: "ZZ".
    public var country: String
    /// The referrer's host (`ReferrerHost`), `directReferrer` or `unknownReferrer`.
    public var referrer: String
    public var kind: Kind
    public var properties: [Property]

    public init(
        eventID: String, occurredAt: Timestamp, artistID: String, visitorID: String, portfolioID: String, kind: Kind,
        sessionID: String? = nil, country: String = "ZZ", referrer: String = directReferrer, properties: [Property] = []
    ) {
        self.eventID = eventID
        self.occurredAt = occurredAt
        self.artistID = artistID
        self.visitorID = visitorID
        self.portfolioID = portfolioID
        self.kind = kind
        self.sessionID = sessionID
        self.country = country
        self.referrer = referrer
        self.properties = properties
    }
}
