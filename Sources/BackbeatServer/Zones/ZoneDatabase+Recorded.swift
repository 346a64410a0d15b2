import BackbeatCore
import BackbeatStore

extension ZoneDatabase {
    /// The artists' zones `store` records, read from this database. Throws `UnknownZone` naming a recorded zone this
    /// database does not hold (the system's tzdata lost it): that artist's days could not be placed.
    public func artistZones(recordedIn store: Store) async throws -> ArtistZones {
        var zones: [String: ZoneRules] = [:]
        let recorded = try await store.recordedZones()
        for (artist, name) in recorded.zones { zones[artist] = try rules(name) }
        return ArtistZones(zones, generation: recorded.generation)
    }
}
