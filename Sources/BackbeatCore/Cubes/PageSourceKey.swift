/// The key of a visitor sketch of one source of an artist's page views: the visitors whose `portfolio_view` came
/// from a referrer host, or from a country, of one page or of all the artist's pages.
///
/// These sketches are kept among the page sketches (`DayBucket.visitors`' keyed ones, `page_visitors_days`), keyed by
/// `<portfolio_id>/<kind>/<value>`: `portfolio_id` is empty for all the artist's pages, `value` is empty for views
/// without one. A `portfolio_id` never holds `/` (`^[A-Za-z0-9._:-]{1,128}$`), so no key of a source is a page's key,
/// and the view `page_source_visitors_daily` (migration 0031) splits them apart again.
public struct PageSourceKey: Hashable, Sendable {
    public enum Kind: String, Sendable {
        /// The host of the view's `referrer`.
        case referrer
        /// The visitor's `country`.
        case country
    }

    public var kind: Kind
    public var value: String
    /// nil: all the artist's pages.
    public var portfolioID: String?

    public init(_ kind: Kind, _ value: String, portfolioID: String?) {
        self.kind = kind
        self.value = value
        self.portfolioID = portfolioID
    }

    /// The key its sketches are kept under.
    public var text: String { "\(portfolioID ?? "")/\(kind.rawValue)/\(value)" }
}
