/// A listener's age bracket; `unknown` when the platform did not say.
public enum AgeRange: String, CaseIterable, Sendable {
    case age13to17 = "13-17"
    case age18to24 = "18-24"
    case age25to34 = "25-34"
    case age35to44 = "35-44"
    case age45to54 = "45-54"
    case age55to64 = "55-64"
    case age65plus = "65+"
    case unknown
}

/// A listener's gender as reported; `unknown` when the platform did not say.
public enum Gender: String, CaseIterable, Sendable {
    case female
    case male
    case nonBinary = "non_binary"
    case unknown
}

/// Where revenue came from.
public enum RevenueSource: String, CaseIterable, Sendable {
    case streaming, download, merch, sync, live, licensing, other
}

/// The event families, each on a topic of its own by default (`type` decides the family, not the topic).
public enum EventType: String, CaseIterable, Sendable {
    case stream, revenue, social, page

    /// The topic of this family among `topics`: the only one when one topic takes every family, else the one at the
    /// family's place (stream, revenue, social, page); nil when the list names no topic there.
    public func topic(among topics: [String]) -> String? {
        if topics.count == 1 { return topics[0] }
        let place = Self.allCases.firstIndex(of: self)!
        return place < topics.count ? topics[place] : nil
    }
}

/// Every value `type` may take: a family's own (stream, revenue, social) or a page event's (`PageEvent.Kind`).
public enum EventTypeName: String, CaseIterable, Sendable {
    case stream, revenue, social
    case portfolioView = "portfolio_view", sectionView = "section_view", blockInteraction = "block_interaction"
    case ctaClick = "cta_click"

    /// The family of events of this type.
    public var family: EventType {
        switch self {
        case .stream: .stream
        case .revenue: .revenue
        case .social: .social
        case .portfolioView, .sectionView, .blockInteraction, .ctaClick: .page
        }
    }
}

/// Character-class checks shared by validation and query parameter parsing.
public enum Identifiers {
    /// 1-128 characters of `A-Za-z0-9._:-` (artist and track ids).
    public static func isID(_ text: String) -> Bool {
        isID(utf8: text.utf8)
    }

    /// `isID` of a value's UTF-8 bytes.
    public static func isID(utf8: some Collection<UInt8>) -> Bool {
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: ":"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    /// A lowercase slug `[a-z0-9_]{1,32}` (platforms), or `[a-z_]{1,32}` when `digits` is false (actions).
    public static func isSlug(_ text: String, digits: Bool = true) -> Bool {
        isSlug(utf8: text.utf8, digits: digits)
    }

    /// `isSlug` of a value's UTF-8 bytes.
    public static func isSlug(utf8: some Collection<UInt8>, digits: Bool = true) -> Bool {
        guard (1...32).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"): true
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits
            default: false
            }
        }
    }

    /// Exactly `length` upper-case ASCII letters (ISO 3166-1 alpha-2, ISO 4217).
    public static func isUpperCode(_ text: String, length: Int) -> Bool {
        isUpperCode(utf8: text.utf8, length: length)
    }

    /// `isUpperCode` of a value's UTF-8 bytes.
    public static func isUpperCode(utf8: some Collection<UInt8>, length: Int) -> Bool {
        return utf8.count == length && utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}
