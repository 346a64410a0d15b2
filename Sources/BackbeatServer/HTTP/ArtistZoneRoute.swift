import BackbeatCore
import BackbeatStore
import Foundation
import Hummingbird

/// `GET` and `PUT /v1/artists/{artist_id}/zone`: the artist's reporting time zone, an IANA name (default UTC), which
/// the artist's token and the admin read and only the admin sets. A name the zone database (`ZoneDatabase`) does not
/// hold is refused with a 400 `unknown_zone` naming it. Events consumed after a change count on the new zone's local
/// days (docs/api.md, "GET and PUT /v1/artists/{artist_id}/zone").
struct ArtistZoneRoute<Context: AuthenticatedRequestContext>: Sendable {
    let store: Store
    let zones: ZoneBook
    /// Run once a zone is stored: this instance reads the zones again (an ingest does so between two flushes).
    let changed: @Sendable () async -> Void

    /// The largest request body accepted.
    static var maxBodyBytes: Int { QueryRoutes<Context>.maxBodyBytes }

    struct ArtistZone: ResponseEncodable {
        var artist_id: String
        var zone: String
    }

    /// `{"zone": NAME}`; a field it does not have is refused (`UnknownField`), not ignored.
    struct ZoneBody: Decodable {
        var zone: String

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case zone
        }

        init(from decoder: Decoder) throws {
            try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue))
            zone = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .zone)
        }
    }

    func add(to group: RouterGroup<Context>) {
        group.get("artists/:artist_id/zone") { request, context -> ArtistZone in
            let artistID = try artistIDParameter(context)
            try request.requireKnownParameters([])
            return ArtistZone(artist_id: artistID, zone: try await store.zone(of: artistID) ?? ZoneRules.utc.name)
        }
        group.put("artists/:artist_id/zone") { request, context -> ArtistZone in
            let artistID = try artistIDParameter(context)
            try context.requireAdmin()
            try request.requireKnownParameters([])
            let body = try await request.decodedJSONBody(ZoneBody.self, upTo: Self.maxBodyBytes) { _ in
                #"the body must be a JSON object {"zone": "<IANA time zone name>"}"#
            }
            let zone: ZoneName
            do throws(ZoneDatabase.UnknownZone) {
                zone = try zones.database.known(body.zone)
            } catch {
                throw APIError(.badRequest, .unknownZone, message: error.description)
            }
            try await store.setZone(zone, of: artistID)
            await changed()
            return ArtistZone(artist_id: artistID, zone: zone.text)
        }
    }
}
