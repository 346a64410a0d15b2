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
            let reading = try body.tz.map { try ReadingZone($0, from: body.from, to: body.to, in: queries.zones.database) }
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
            let (parts, over) = try self.parts(of: query, readIn: reading, quarterHoursFrom: try await queries.quarterHours.firstDay())
            let shaped = query
            return try EncodedAnswer.response(to: request, try await queries.answer(key: nil, over: over, plan: try await queries.plan(for: query)) { reads in
                try EncodedAnswer.json(QueryResponse(query: shaped, rows: try ResultShaper.shape(try await reads.rows(of: parts), for: shaped), zone: reading.zone.outsideUTC))
            })
        } catch let error as QueryError {
            throw APIError(error)
        }
    }

    /// What a query read in another zone (`tz`) reads: for each zone its artists are stored in, their rows, regrouped
    /// from their stored hours unless that zone is the one read; and the interval of stored clocks the parts cover.
    private func parts(
        of query: Query, readIn reading: ReadingZone, quarterHoursFrom: Int64
    ) throws -> (parts: [(query: Query, regrouping: ZoneRegrouping?)], over: QueryInterval) {
        guard let artists = query.filters[.artistID] else {
            throw APIError(QueryError(.missingParameter, "tz needs filters.artist_id: each artist's numbers are kept on the clock of its own zone, and read in another zone artist by artist"))
        }
        var byZone: [String: (zone: ZoneRules, artists: [String])] = [:]
        for artist in artists {
            let zone = queries.zones[artist]
            byZone[zone.name, default: (zone, [])].artists.append(artist)
        }
        var parts: [(query: Query, regrouping: ZoneRegrouping?)] = []
        var over = query.interval
        for (name, stored) in byZone.sorted(by: { $0.key < $1.key }) {
            var part = query
            part.filters[.artistID] = stored.artists
            part.orderBy = nil
            part.limit = nil
            if name == reading.zone.name {
                // Stored on the clock read: read as they are, over the stored hours the instants cover.
                part.interval = try reading.regrouping(of: stored.zone, by: .all, quarterHoursFrom: quarterHoursFrom).stored
                parts.append((part, nil))
            } else {
                let regrouping = try reading.regrouping(of: stored.zone, by: query.granularity, quarterHoursFrom: quarterHoursFrom)
                parts.append((part, regrouping))
                over = QueryInterval(from: min(over.from, regrouping.stored.from), to: max(over.to, regrouping.stored.to))
            }
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
