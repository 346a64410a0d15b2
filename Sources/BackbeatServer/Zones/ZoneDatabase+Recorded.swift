import BackbeatCore
import BackbeatStore

extension ZoneDatabase {
    /// The artists' zones `store` records, read from this database. Throws `UnknownZone` naming a recorded zone this
    /// database does not hold (the system's tzdata lost it): that artist's days could not be placed.
    public func artistZones(recordedIn store: Store) async throws -> ArtistZones {
        let recorded = try await store.recordedZones()
        return try artistZones(recorded.zones, generation: recorded.generation)
    }

    /// The zones named by artist (`Store.recordedZones`), read from this database.
    func artistZones(_ names: [String: String], generation: Int64) throws(UnknownZone) -> ArtistZones {
        var zones: [String: ZoneRules] = [:]
        for (artist, name) in names { zones[artist] = try rules(name) }
        return ArtistZones(zones, generation: generation)
    }
}
