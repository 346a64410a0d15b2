import BackbeatCore
import BackbeatStore
import Foundation
import Hummingbird

/// `GET` and `PUT /v1/artists/{artist_id}/zone`: the artist's reporting time zone, an IANA name (default UTC), which
/// the artist's token and the admin read and only the admin sets. A name the zone database (`ZoneDatabase`) does not
/// hold is refused with a 400 `unknown_zone` naming it. Events consumed after a change count on the new zone's local
/// days; the days counted before are counted again in it from the quarter-hour detail kept (`Store.recountFromDetail`:
/// what it cannot count, the answer names), from the archive (`backbeat artist set-zone ... ARCHIVE`), or kept in the
/// zone before when asked (`keep_counted_days`) (docs/api.md, "GET and PUT /v1/artists/{artist_id}/zone").
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
        /// What a recount from the detail could not count (`RecountGaps`), as dates of `zone`: the first day with
        /// counts, later days without, the first day with unique listeners (absent: none such).
        var counts_from: String?
        var counts_missing: [String]?
        var listeners_from: String?
        /// A change that counted the stored days again from the detail: the full-dimension rows it moved.
        var recounted_rows: Int?

        init(artistID: String, recorded: ZoneRecord?, recountedRows: Int? = nil) {
            artist_id = artistID
            zone = recorded?.zone ?? ZoneRules.utc.name
            counted_in_zone_since = recorded?.countedSince.map(RFC3339.format)
            let gaps = recorded?.gaps ?? RecountGaps()
            counts_from = gaps.countsFrom.map(Self.date)
            counts_missing = gaps.countsMissing.isEmpty ? nil : gaps.countsMissing.sorted().map(Self.date)
            listeners_from = gaps.listenersFrom.map(Self.date)
            recounted_rows = recountedRows
        }

        static func date(_ day: Int64) -> String { RFC3339.formatDate(CivilDate(daysSinceEpoch: day)) }
    }

    /// `{"zone": NAME, "keep_counted_days": BOOL}`; a field it does not have is refused (`UnknownField`), not ignored.
    struct ZoneBody: Decodable {
        var zone: String
        /// Whether the days the artist has stored stay in its zone before (default false: they are counted again in the
        /// new one from the detail kept).
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
            let database = zones.database
            let change = try await store.setZone(zone, of: artistID, keepingCountedDays: body.keepCountedDays) { try database.rules($0) }
            await changed()
            var rows: Int?
            if case .recounted(_, let moved, _) = change { rows = moved }
            return ArtistZone(artistID: artistID, recorded: try await store.zoneRecord(of: artistID), recountedRows: rows)
        }
    }
}
