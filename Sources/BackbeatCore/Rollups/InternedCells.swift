/// A dimension value of an interned row: an id of the delta's `ValueDictionary`, a case of an enum dimension, or
/// none (a dimension the row's dataset does not have, written as "").
public enum InternedValue: Hashable, Sendable {
    case id(UInt32)
    case ageRange(AgeRange)
    case gender(Gender)
    case source(RevenueSource)
    case none

    /// The text of a value that is not an id.
    public var fixedText: String? {
        switch self {
        case .id: nil
        case .ageRange(let value): value.rawValue
        case .gender(let value): value.rawValue
        case .source(let value): value.rawValue
        case .none: ""
        }
    }

    /// Every value that is not an id, in a fixed order: the age ranges, the genders, the revenue sources, none.
    public static let fixedValues: [InternedValue] = AgeRange.allCases.map(InternedValue.ageRange)
        + Gender.allCases.map(InternedValue.gender) + RevenueSource.allCases.map(InternedValue.source) + [.none]

    /// The value as one integer, for `TableKey` hashes: an id above its place's byte (0xFF), any other value its place.
    @inline(__always)
    var tableCode: UInt64 {
        switch self {
        case .id(let id): UInt64(id) << 8 | 0xFF
        default: UInt64(fixedPlace ?? 0)
        }
    }

    /// The place of a value that is not an id in `fixedValues` (nil for an id), from its case ordinal.
    public var fixedPlace: Int? {
        switch self {
        case .id: nil
        case .ageRange(let value): Int(TableHash.ordinal(value))
        case .gender(let value): AgeRange.allCases.count + Int(TableHash.ordinal(value))
        case .source(let value): AgeRange.allCases.count + Gender.allCases.count + Int(TableHash.ordinal(value))
        case .none: Self.fixedValues.count - 1
        }
    }
}

/// The key of a row of a full-dimension rollup with interned values, by quarter hour of the artist's local time.
public protocol InternedRowKey: TableKey {
    var artist: UInt32 { get }
    /// Quarter hours since the epoch, of the artist's local time (`Cube.Grain.quarterHour`).
    var quarter: Int64 { get }
    /// This row's value of `dimension` ("" for a dimension the row's dataset does not have).
    func value(of dimension: Dimension) -> InternedValue
    /// The same key with each id `i` replaced by `ids[i]` (its value's id in another dictionary).
    func remapped(_ ids: [UInt32]) -> Self
}

public struct StreamCell: InternedRowKey {
    public var artist: UInt32
    public var track: UInt32
    public var platform: UInt32
    public var country: UInt32
    public var quarter: Int64
    public var ageRange: AgeRange
    public var gender: Gender

    public func value(of dimension: Dimension) -> InternedValue {
        switch dimension {
        case .artistID: .id(artist)
        case .trackID: .id(track)
        case .platform: .id(platform)
        case .country: .id(country)
        case .ageRange: .ageRange(ageRange)
        case .gender: .gender(gender)
        default: .none
        }
    }

    public func remapped(_ ids: [UInt32]) -> StreamCell {
        var cell = self
        (cell.artist, cell.track, cell.platform, cell.country) = (ids[Int(artist)], ids[Int(track)], ids[Int(platform)], ids[Int(country)])
        return cell
    }

    public func hash(seed: UInt64) -> UInt64 {
        var hash = TableHash.mix(seed, UInt64(artist) << 32 | UInt64(track))
        hash = TableHash.mix(hash, UInt64(platform) << 32 | UInt64(country))
        return TableHash.mix(hash, UInt64(bitPattern: quarter) << 16 | TableHash.ordinal(ageRange) << 8 | TableHash.ordinal(gender))
    }
}

public struct RevenueCell: InternedRowKey {
    public var artist: UInt32
    public var quarter: Int64
    public var source: RevenueSource
    public var currency: UInt32
    /// "" when the event had none.
    public var platform: UInt32
    /// "" when the event had none.
    public var track: UInt32

    public func value(of dimension: Dimension) -> InternedValue {
        switch dimension {
        case .artistID: .id(artist)
        case .source: .source(source)
        case .currency: .id(currency)
        case .platform: .id(platform)
        case .trackID: .id(track)
        default: .none
        }
    }

    public func remapped(_ ids: [UInt32]) -> RevenueCell {
        var cell = self
        (cell.artist, cell.currency, cell.platform, cell.track) = (ids[Int(artist)], ids[Int(currency)], ids[Int(platform)], ids[Int(track)])
        return cell
    }

    public func hash(seed: UInt64) -> UInt64 {
        var hash = TableHash.mix(seed, UInt64(artist) << 32 | UInt64(currency))
        hash = TableHash.mix(hash, UInt64(platform) << 32 | UInt64(track))
        return TableHash.mix(hash, UInt64(bitPattern: quarter) << 8 | TableHash.ordinal(source))
    }
}

public struct SocialCell: InternedRowKey {
    public var artist: UInt32
    public var quarter: Int64
    public var platform: UInt32
    public var action: UInt32

    public func value(of dimension: Dimension) -> InternedValue {
        switch dimension {
        case .artistID: .id(artist)
        case .platform: .id(platform)
        case .action: .id(action)
        default: .none
        }
    }

    public func remapped(_ ids: [UInt32]) -> SocialCell {
        var cell = self
        (cell.artist, cell.platform, cell.action) = (ids[Int(artist)], ids[Int(platform)], ids[Int(action)])
        return cell
    }

    public func hash(seed: UInt64) -> UInt64 {
        TableHash.mix(TableHash.mix(seed, UInt64(artist) << 32 | UInt64(platform)), UInt64(bitPattern: quarter) << 32 ^ UInt64(action))
    }
}

/// A page event's row: every value is an id (a field a type does not have is "").
public struct PageCell: InternedRowKey {
    public var artist: UInt32
    public var quarter: Int64
    public var portfolio: UInt32
    /// The id of the type's name (`EventTypeName.rawValue`).
    public var type: UInt32
    public var section: UInt32
    public var block: UInt32
    public var blockType: UInt32
    public var action: UInt32
    public var actionType: UInt32
    public var referrer: UInt32
    public var country: UInt32

    public func value(of dimension: Dimension) -> InternedValue {
        switch dimension {
        case .artistID: .id(artist)
        case .portfolioID: .id(portfolio)
        case .eventType: .id(type)
        case .sectionID: .id(section)
        case .blockID: .id(block)
        case .blockType: .id(blockType)
        case .action: .id(action)
        case .actionType: .id(actionType)
        case .referrer: .id(referrer)
        case .country: .id(country)
        default: .none
        }
    }

    public func remapped(_ ids: [UInt32]) -> PageCell {
        var cell = self
        (cell.artist, cell.portfolio, cell.type, cell.section, cell.block) =
            (ids[Int(artist)], ids[Int(portfolio)], ids[Int(type)], ids[Int(section)], ids[Int(block)])
        (cell.blockType, cell.action, cell.actionType, cell.referrer, cell.country) =
            (ids[Int(blockType)], ids[Int(action)], ids[Int(actionType)], ids[Int(referrer)], ids[Int(country)])
        return cell
    }

    public func hash(seed: UInt64) -> UInt64 {
        var hash = TableHash.mix(seed, UInt64(artist) << 32 | UInt64(portfolio))
        hash = TableHash.mix(hash, UInt64(type) << 32 | UInt64(section))
        hash = TableHash.mix(hash, UInt64(block) << 32 | UInt64(blockType))
        hash = TableHash.mix(hash, UInt64(action) << 32 | UInt64(actionType))
        hash = TableHash.mix(hash, UInt64(referrer) << 32 | UInt64(country))
        return TableHash.mix(hash, UInt64(bitPattern: quarter))
    }
}

/// An artist's UTC day (days since the epoch), the grain of the unique-listener sketches.
public struct ArtistDayCell: Hashable, TableKey {
    public var artist: UInt32
    public var day: Int64

    public func hash(seed: UInt64) -> UInt64 {
        TableHash.mix(seed, UInt64(artist) << 32 ^ UInt64(truncatingIfNeeded: day))
    }
}

/// A track's UTC day, the grain of the per-track unique-listener sketches.
public struct TrackDayCell: Hashable, Sendable {
    public var artist: UInt32
    public var track: UInt32
    public var day: Int64

    /// The same track day with its ids replaced by `ids[id]` (as `InternedRowKey.remapped`).
    func remapped(_ ids: [UInt32]) -> TrackDayCell {
        TrackDayCell(artist: ids[Int(artist)], track: ids[Int(track)], day: day)
    }
}

/// A session of the page funnel: an artist's portfolio and the visitor's `session_id` (an id of the delta's
/// `sessionIDs`, not of its `values`).
public struct SessionCell: Hashable, TableKey {
    public var artist: UInt32
    public var portfolio: UInt32
    public var session: UInt32

    public func hash(seed: UInt64) -> UInt64 {
        TableHash.mix(TableHash.mix(seed, UInt64(artist) << 32 | UInt64(portfolio)), UInt64(session))
    }
}

/// A row of the page funnel: sessions counted on the (local) quarter hour of their first view, by portfolio.
public struct FunnelCell: InternedRowKey {
    public var artist: UInt32
    public var quarter: Int64
    public var portfolio: UInt32

    public func value(of dimension: Dimension) -> InternedValue {
        switch dimension {
        case .artistID: .id(artist)
        case .portfolioID: .id(portfolio)
        default: .none
        }
    }

    public func remapped(_ ids: [UInt32]) -> FunnelCell {
        FunnelCell(artist: ids[Int(artist)], quarter: quarter, portfolio: ids[Int(portfolio)])
    }

    public func hash(seed: UInt64) -> UInt64 {
        TableHash.mix(TableHash.mix(seed, UInt64(artist) << 32 | UInt64(portfolio)), UInt64(bitPattern: quarter))
    }
}
