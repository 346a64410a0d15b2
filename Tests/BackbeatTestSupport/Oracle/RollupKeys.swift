import BackbeatCore

// The string-keyed rows of the hourly rollups: the test oracle the interned path (`InternedDelta`, `CubeMemory`) is
// checked against. The service never makes them.

/// The dimensions of a row of the hourly stream rollup.
///
/// Rollup keys hash their strings once, when made, and keep the result: dictionaries of hundreds of thousands of
/// rows rehash every key each time they grow, and hashing the strings again there dominated the rollup profile.
public struct StreamKey: Hashable, Sendable {
    public let artistID: String
    public let hour: HourBucket
    public let trackID: String
    public let platform: String
    public let country: String
    public let ageRange: AgeRange
    public let gender: Gender
    private let cachedHash: Int

    public init(_ event: StreamEvent) {
        self.init(
            artistID: event.artistID, hour: HourBucket(containing: event.occurredAt), trackID: event.trackID,
            platform: event.platform, country: event.country, ageRange: event.ageRange, gender: event.gender
        )
    }

    public init(artistID: String, hour: HourBucket, trackID: String, platform: String, country: String, ageRange: AgeRange, gender: Gender) {
        self.artistID = artistID
        self.hour = hour
        self.trackID = trackID
        self.platform = platform
        self.country = country
        self.ageRange = ageRange
        self.gender = gender
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(hour.hoursSinceEpoch)
        hasher.combine(trackID)
        hasher.combine(platform)
        hasher.combine(country)
        hasher.combine(ageRange)
        hasher.combine(gender)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: StreamKey, rhs: StreamKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.hour == rhs.hour && lhs.artistID == rhs.artistID && lhs.trackID == rhs.trackID
            && lhs.platform == rhs.platform && lhs.country == rhs.country && lhs.ageRange == rhs.ageRange && lhs.gender == rhs.gender
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
    }
}

/// The dimensions of a row of the hourly revenue rollup; absent platform and track are stored as "".
public struct RevenueKey: Hashable, Sendable {
    public let artistID: String
    public let hour: HourBucket
    public let source: RevenueSource
    public let currency: String
    public let platform: String
    public let trackID: String
    private let cachedHash: Int

    public init(_ event: RevenueEvent) {
        self.init(
            artistID: event.artistID, hour: HourBucket(containing: event.occurredAt), source: event.source,
            currency: event.currency, platform: event.platform ?? "", trackID: event.trackID ?? "")
    }

    public init(artistID: String, hour: HourBucket, source: RevenueSource, currency: String, platform: String, trackID: String) {
        self.artistID = artistID
        self.hour = hour
        self.source = source
        self.currency = currency
        self.platform = platform
        self.trackID = trackID
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(hour.hoursSinceEpoch)
        hasher.combine(source)
        hasher.combine(currency)
        hasher.combine(platform)
        hasher.combine(trackID)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: RevenueKey, rhs: RevenueKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.hour == rhs.hour && lhs.artistID == rhs.artistID && lhs.source == rhs.source
            && lhs.currency == rhs.currency && lhs.platform == rhs.platform && lhs.trackID == rhs.trackID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
    }
}

/// The dimensions of a row of the hourly social rollup.
public struct SocialKey: Hashable, Sendable {
    public let artistID: String
    public let hour: HourBucket
    public let platform: String
    public let action: String
    private let cachedHash: Int

    public init(_ event: SocialEvent) {
        self.init(artistID: event.artistID, hour: HourBucket(containing: event.occurredAt), platform: event.platform, action: event.action)
    }

    public init(artistID: String, hour: HourBucket, platform: String, action: String) {
        self.artistID = artistID
        self.hour = hour
        self.platform = platform
        self.action = action
        var hasher = Hasher()
        hasher.combine(artistID)
        hasher.combine(hour.hoursSinceEpoch)
        hasher.combine(platform)
        hasher.combine(action)
        cachedHash = hasher.finalize()
    }

    public static func == (lhs: SocialKey, rhs: SocialKey) -> Bool {
        lhs.cachedHash == rhs.cachedHash && lhs.hour == rhs.hour && lhs.artistID == rhs.artistID
            && lhs.platform == rhs.platform && lhs.action == rhs.action
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(cachedHash)
    }
}

/// The dimensions of a row of the hourly page rollup: every dimension of `Dataset.page`, "" where the event's type
/// has none.
public struct PageKey: Hashable, Sendable {
    public let artistID: String
    public let hour: HourBucket
    /// `Dimension.eventType` onwards, in `Dataset.page.dimensions` order (after `artist_id`).
    public let values: [String]

    public init(_ event: PageEvent) {
        var values: [Dimension: String] = [
            .portfolioID: event.portfolioID, .referrer: event.referrer, .country: event.country]
        switch event.kind {
        case .portfolioView: values[.eventType] = EventTypeName.portfolioView.rawValue
        case .sectionView(let sectionID):
            values[.eventType] = EventTypeName.sectionView.rawValue
            values[.sectionID] = sectionID
        case .blockInteraction(let blockID, let blockType, let action):
            values[.eventType] = EventTypeName.blockInteraction.rawValue
            (values[.blockID], values[.blockType], values[.action]) = (blockID, blockType, action)
        case .ctaClick(let actionType):
            values[.eventType] = EventTypeName.ctaClick.rawValue
            values[.actionType] = actionType
        }
        self.init(artistID: event.artistID, hour: HourBucket(containing: event.occurredAt),
                  values: Dataset.page.dimensions.dropFirst().map { values[$0] ?? "" })
    }

    public init(artistID: String, hour: HourBucket, values: [String]) {
        self.artistID = artistID
        self.hour = hour
        self.values = values
    }
}

/// The key of a row of a full-dimension hourly rollup: the artist, the hour and a value for every dimension, so that
/// cubes (stored or in memory) are cut from the hourly rows by one rule.
public protocol HourlyRowKey: Hashable {
    var artistID: String { get }
    var hour: HourBucket { get }
    /// This row's value of `dimension` ("" for a dimension the row's dataset does not have).
    func value(of dimension: Dimension) -> String
}

extension StreamKey: HourlyRowKey {
    /// This row's value of `dimension` ("" for a dimension streams do not have).
    public func value(of dimension: Dimension) -> String {
        switch dimension {
        case .artistID: artistID
        case .trackID: trackID
        case .platform: platform
        case .country: country
        case .ageRange: ageRange.rawValue
        case .gender: gender.rawValue
        default: ""
        }
    }
}

extension RevenueKey: HourlyRowKey {
    /// This row's value of `dimension` ("" for a dimension revenue does not have, or an absent platform or track).
    public func value(of dimension: Dimension) -> String {
        switch dimension {
        case .artistID: artistID
        case .source: source.rawValue
        case .currency: currency
        case .platform: platform
        case .trackID: trackID
        default: ""
        }
    }
}

extension PageKey: HourlyRowKey {
    /// This row's value of `dimension` ("" for a dimension page events do not have).
    public func value(of dimension: Dimension) -> String {
        guard dimension != .artistID else { return artistID }
        return Dataset.page.dimensions.dropFirst().firstIndex(of: dimension).map { values[$0 - 1] } ?? ""
    }
}

extension SocialKey: HourlyRowKey {
    /// This row's value of `dimension` ("" for a dimension social events do not have).
    public func value(of dimension: Dimension) -> String {
        switch dimension {
        case .artistID: artistID
        case .platform: platform
        case .action: action
        default: ""
        }
    }
}
