import BackbeatCore
import Hummingbird

/// The `{artist_id}` path parameter, or a 400 when it cannot be an artist id.
func artistIDParameter(_ context: some RequestContext) throws -> String {
    let artistID = try context.parameters.require("artist_id")
    guard Identifiers.isID(artistID) else {
        throw APIError(.badRequest, code: QueryError.Code.invalidParameter.rawValue, message: "artist_id must be 1-128 characters of A-Za-z0-9._:-")
    }
    return artistID
}
