import BackbeatCore
import BackbeatStore
import Foundation
import Hummingbird

/// `GET` and `PUT /v1/artists/{artist_id}/zone`: the artist's reporting time zone, an IANA name (default UTC), which
/// the artist's token and the admin read and only the admin sets. A name the zone database (`ZoneDatabase`) does not
/// hold is refused with a 400 `unknown_zone` naming it. Events consumed after a change count on the new zone's local
/// days; the days counted before are counted again from the archive (`backbeat artist set-zone ... ARCHIVE`), or kept
/// in the zone before only when asked (`keep_counted_days`), else a 409 `zone_change_needs_recount` (docs/api.md, "GET
/// and PUT /v1/artists/{artist_id}/zone").
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
        /// Since when the artist's events are counted in `zone`, when the days counted before were kept in earlier
        /// zones (absent: every stored day is in `zone`).
        var counted_in_zone_since: String?

        init(artistID: String, recorded: (zone: String, countedSince: Timestamp?)?) {
            artist_id = artistID
            zone = recorded?.zone ?? ZoneRules.utc.name
            counted_in_zone_since = recorded?.countedSince.map(RFC3339.format)
        }
    }

    /// `{"zone": NAME, "keep_counted_days": BOOL}`; a field it does not have is refused (`UnknownField`), not ignored.
    struct ZoneBody: Decodable {
        var zone: String
        /// Whether the days the artist has stored may stay in its zone before (default false: such a change is refused).
        var keepCountedDays: Bool

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case zone
            case keepCountedDays = "keep_counted_days"
        }

        init(from decoder: Decoder) throws {
            try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            zone = try container.decode(String.self, forKey: .zone)
            // Absent is false; present, it must be a boolean (`null` is refused, as the document says).
            keepCountedDays = container.contains(.keepCountedDays) ? try container.decode(Bool.self, forKey: .keepCountedDays) : false
        }
    }

    func add(to group: RouterGroup<Context>) {
        group.get("artists/:artist_id/zone") { request, context -> ArtistZone in
            let artistID = try artistIDParameter(context)
            try request.requireKnownParameters([])
            return ArtistZone(artistID: artistID, recorded: try await store.zoneRecord(of: artistID))
        }
        group.put("artists/:artist_id/zone") { request, context -> ArtistZone in
            let artistID = try artistIDParameter(context)
            try context.requireAdmin()
            try request.requireKnownParameters([])
            let body = try await request.decodedJSONBody(ZoneBody.self, upTo: Self.maxBodyBytes) { _ in
                #"the body must be a JSON object {"zone": "<IANA time zone name>", "keep_counted_days": <optional boolean>}"#
            }
            let zone: ZoneName
            do throws(ZoneDatabase.UnknownZone) {
                zone = try zones.database.known(body.zone)
            } catch {
                throw APIError(.badRequest, .unknownZone, message: error.description)
            }
            do {
                try await store.setZone(zone, of: artistID, keepingCountedDays: body.keepCountedDays)
            } catch let refused as ZoneChangeNeedsRecount {
                throw APIError(.conflict, .zoneChangeNeedsRecount, message: refused.description)
            }
            await changed()
            return ArtistZone(artistID: artistID, recorded: try await store.zoneRecord(of: artistID))
        }
    }
}
