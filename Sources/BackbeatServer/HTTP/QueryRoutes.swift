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
            let query = try builder.build(defaultGranularity: .all)
            if case .artist(let own) = context.principal, query.filters[.artistID].map({ $0.allSatisfy { $0 == own } }) != true {
                throw APIError(.forbidden, .forbidden, message: "an artist token must filter on its own artist: \"filters\": {\"artist_id\": [\"\(own)\"]}")
            }
            return try EncodedAnswer.response(to: request, try await queries.answer(key: nil, for: query) { reads in
                try EncodedAnswer.json(QueryResponse(query: query, rows: try await reads.answer(query)))
            })
        } catch let error as QueryError {
            throw APIError(error)
        }
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
