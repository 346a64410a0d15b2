/// Each artist's reporting time zone: the zone whose local days and hours the artist's events are counted on. An
/// artist not listed reports in UTC (so an empty book changes nothing and costs nothing per event).
///
/// An artist's stored hours and days are the artist's local wall-clock time written as if it were UTC ("floating"
/// time): an event at 2026-03-08T09:30Z for an artist in America/Los_Angeles (UTC-8 then) is counted in the hour
/// 2026-03-08T01:00 and on the day 2026-03-08. Reads of that artist take and give times in the same local clock.
public struct ArtistZones: Sendable, Equatable {
    private var zones: [String: ZoneRules]
    /// The generation of the recorded zones these are (`artist_zones.generation`, migration 0024: the highest of any
    /// zone set; 0 when none is): what a batch counted in them carries, so that PostgreSQL refuses it once the zones
    /// moved on.
    public let generation: Int64

    /// `zones` by artist id; UTC entries are left out, being the default.
    public init(_ zones: [String: ZoneRules] = [:], generation: Int64 = 0) {
        self.zones = zones.filter { $0.value != .utc }
        self.generation = generation
    }

    /// Every artist in UTC.
    public static let allUTC = ArtistZones()

    /// Whether every artist reports in UTC.
    public var isEmpty: Bool { zones.isEmpty }

    /// The artists outside UTC.
    public var count: Int { zones.count }

    /// The zone of `artist` (UTC when none is set).
    public subscript(artist: String) -> ZoneRules {
        zones[artist] ?? .utc
    }

    /// The zone of `artist` when it is not UTC.
    public func zoneOutsideUTC(of artist: String) -> ZoneRules? {
        zones[artist]
    }

    /// The artists outside UTC and their zones.
    public var outsideUTC: [String: ZoneRules] { zones }

    /// The artists outside UTC and their zones' names.
    public var names: [String: String] { zones.mapValues(\.name) }
}
