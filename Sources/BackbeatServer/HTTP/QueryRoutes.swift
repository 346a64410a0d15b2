import BackbeatCore
import Foundation
import Hummingbird

/// `POST /v1/query`: the general aggregate query.
struct QueryRoutes<Context: AuthenticatedRequestContext>: Sendable {
    /// The largest request body accepted.
    static var maxBodyBytes: Int { 64 * 1024 }

    let queries: QueryService

    func add(to group: RouterGroup<Context>) {
        group.post("query", use: query)
    }

    @Sendable func query(_ request: Request, context: Context) async throws -> Response {
        let body = try await request.decodedJSONBody(QueryBody.self, upTo: Self.maxBodyBytes) {
            "the body must be a JSON query object: \(Self.describe($0))"
        }
        var builder = QueryBuilder()
        builder.dataset = body.dataset
        builder.from = body.from
        builder.to = body.to
        builder.granularity = body.granularity
        builder.groupBy = body.group_by ?? []
        builder.filters = (body.filters ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        builder.orderByMetric = body.order_by?.metric
        builder.orderByDirection = body.order_by?.direction
        builder.limit = body.limit.map(String.init)
        do {
            let zones = queries.zones.zones
            let reading = try Self.zoneRead(by: body, zones).map { try ReadingZone($0, from: body.from, to: body.to, in: queries.zones.database) }
            if let reading {
                // Checked and shaped on the zone's clock: the whole hours around the instants, then the instants.
                let hours = reading.local.wholeHours
                builder.from = RFC3339.format(hours.from)
                builder.to = RFC3339.format(hours.to)
            }
            let built = try builder.build(defaultGranularity: .all)
            if case .artist(let own) = context.principal, built.filters[.artistID].map({ $0.allSatisfy { $0 == own } }) != true {
                throw APIError(.forbidden, .forbidden, message: "an artist token must filter on its own artist: \"filters\": {\"artist_id\": [\"\(own)\"]}")
            }
            guard let reading else {
                return try EncodedAnswer.response(to: request, try await queries.answer(key: nil, for: built) { reads in
                    try EncodedAnswer.json(QueryResponse(query: built, rows: try await reads.answer(built)))
                })
            }
            var query = built
            query.interval = reading.local
            let (parts, over) = try Self.parts(of: query, readIn: reading, zones, quarterHoursFrom: try await queries.quarterHours.firstDay())
            let shaped = query
            return try EncodedAnswer.response(to: request, try await queries.answer(key: nil, over: over, plan: try await queries.plan(for: query)) { reads in
                try EncodedAnswer.json(QueryResponse(query: shaped, rows: try ResultShaper.shape(try await reads.rows(of: parts), for: shaped), zone: reading.zone.outsideUTC))
            })
        } catch let error as QueryError {
            throw APIError(error)
        }
    }

    /// The zone a query is read in: its `tz`, else UTC where it reads an artist stored in another zone (a query that
    /// reads only artists in UTC reads their rows as stored, which are UTC's).
    static func zoneRead(by body: QueryBody, _ zones: ArtistZones) -> String? {
        if let tz = body.tz { return tz }
        guard !zones.isEmpty else { return nil }
        guard let artists = body.filters?[Dimension.artistID.rawValue] else { return ZoneRules.utc.name }
        return artists.contains { zones.zoneOutsideUTC(of: $0) != nil } ? ZoneRules.utc.name : nil
    }

    /// What a query read in a zone (`tz`, or UTC by default) reads: for each zone its artists are stored in, their
    /// rows, regrouped from their stored hours or quarter hours unless that zone is the one read; and the interval of
    /// stored clocks the parts cover. Without an artist filter, the artists outside UTC are read by zone and every
    /// other artist (in UTC) as one part that leaves them out.
    private static func parts(
        of query: Query, readIn reading: ReadingZone, _ zones: ArtistZones, quarterHoursFrom: Int64
    ) throws -> (parts: [(query: Query, regrouping: ZoneRegrouping?)], over: QueryInterval) {
        var byZone: [String: (zone: ZoneRules, artists: [String])] = [:]
        let filtered = query.filters[.artistID]
        for artist in filtered ?? Array(zones.outsideUTC.keys) {
            let zone = zones[artist]
            byZone[zone.name, default: (zone, [])].artists.append(artist)
        }
        var parts: [(query: Query, regrouping: ZoneRegrouping?)] = []
        var over = query.interval
        func add(_ part: Query, storedIn zone: ZoneRules) throws {
            var part = part
            part.orderBy = nil
            part.limit = nil
            if zone.name == reading.zone.name {
                // Stored on the clock read: read as they are, over the stored hours the instants cover.
                part.interval = try reading.regrouping(of: zone, by: .all, quarterHoursFrom: quarterHoursFrom).stored
                parts.append((part, nil))
            } else {
                let regrouping = try reading.regrouping(of: zone, by: query.granularity, quarterHoursFrom: quarterHoursFrom)
                parts.append((part, regrouping))
                over = QueryInterval(from: min(over.from, regrouping.stored.from), to: max(over.to, regrouping.stored.to))
            }
        }
        for (_, stored) in byZone.sorted(by: { $0.key < $1.key }) {
            var part = query
            part.filters[.artistID] = stored.artists.sorted()
            try add(part, storedIn: stored.zone)
        }
        if filtered == nil {
            var others = query
            others.excludedArtists = zones.outsideUTC.keys.sorted()
            try add(others, storedIn: .utc)
        }
        return (parts, over)
    }

    /// A short, safe description of a decoding failure.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "\(path.isEmpty ? "the body" : path) has the wrong type"
        case DecodingError.dataCorrupted:
            return "not valid JSON"
        default:
            return "not a valid query"
        }
    }
}
