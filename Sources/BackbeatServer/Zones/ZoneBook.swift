import BackbeatCore
import BackbeatStore
import Synchronization

/// The artists' reporting zones as this instance last read them from PostgreSQL (`artist_zones`), through one zone
/// database: what the ingest counts events in and what reads label their periods with. Read at the start, and again
/// whenever a zone is set through this instance or seen changed in PostgreSQL (`IngestService.noticeStoredChanges`).
public final class ZoneBook: Sendable {
    public let database: ZoneDatabase
    private let current = Mutex(ArtistZones.allUTC)
    /// The days recounts from the detail left without counts or listeners, by artist (`RecountGaps`).
    private let recountGaps = Mutex<[String: RecountGaps]>([:])

    public init(database: ZoneDatabase = ZoneDatabase()) {
        self.database = database
    }

    /// Every artist's zone as last read.
    public var zones: ArtistZones { current.withLock { $0 } }

    /// `artist`'s zone as last read (UTC when none is recorded).
    public subscript(artist: String) -> ZoneRules {
        current.withLock { $0[artist] }
    }

    /// What the last recount of `artist`'s days from the detail could not count, as last read (nil: nothing).
    public func gaps(of artist: String) -> RecountGaps? {
        recountGaps.withLock { $0[artist] }
    }

    /// `artist`'s zone as last read, when it is not UTC.
    public func zoneOutsideUTC(of artist: String) -> ZoneRules? {
        current.withLock { $0.zoneOutsideUTC(of: artist) }
    }

    /// Reads the zones `store` records; answers them. Throws (keeping those read before) when PostgreSQL does not
    /// answer or a recorded zone is not in the database (`ZoneDatabase.UnknownZone`).
    @discardableResult
    public func reload(from store: Store) async throws -> ArtistZones {
        let recorded = try await store.recordedZones()
        let zones = try database.artistZones(recorded.zones, generation: recorded.generation)
        current.withLock { $0 = zones }
        recountGaps.withLock { $0 = recorded.gaps }
        return zones
    }
}
