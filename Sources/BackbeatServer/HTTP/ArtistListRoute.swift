import BackbeatCore
import BackbeatStore
import Hummingbird

/// `GET /v1/artists`: the artists this token may read: every artist with stored numbers for the admin (at most
/// `limit`, default 1000), the token's own artist for an artist token. The web dashboard's artist picker.
struct ArtistListRoute<Context: AuthenticatedRequestContext>: Sendable {
    let store: Store

    struct ArtistList: ResponseEncodable {
        var artists: [String]
        /// "admin" or "artist".
        var role: String
    }

    func add(to group: RouterGroup<Context>) {
        group.get("artists") { request, context -> ArtistList in
            guard let principal = context.principal else {
                throw APIError(.unauthorized, .unauthorized, message: "a bearer token is required")
            }
            try request.requireKnownParameters(["limit"])
            // `limit` is checked for either token, though an artist token's list is its one artist.
            let text = request.uri.queryParameters.get("limit") ?? "1000"
            guard let limit = Int(text), (1...10_000).contains(limit) else {
                throw APIError(.badRequest, code: QueryError.Code.invalidParameter.rawValue, message: "limit must be an integer from 1 to 10000")
            }
            switch principal {
            case .artist(let own):
                return ArtistList(artists: [own], role: "artist")
            case .admin:
                return ArtistList(artists: try await store.artistIDs(limit: limit), role: "admin")
            }
        }
    }
}
