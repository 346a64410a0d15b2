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
        case .source, .currency, .action: ""
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
        case .country, .ageRange, .gender, .action: ""
        }
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
