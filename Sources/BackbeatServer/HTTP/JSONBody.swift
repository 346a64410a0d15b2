import Foundation
import Hummingbird

extension Request {
    /// The body, at most `limit` bytes (beyond: a 413), decoded as `Body`: a field `Body` does not have is a 400
    /// `unknown_parameter` naming it (`UnknownField`), any other failure a 400 `invalid_body` saying `invalid(error)`.
    func decodedJSONBody<Body: Decodable>(_ type: Body.Type, upTo limit: Int, invalid: (any Error) -> String) async throws -> Body {
        let buffer = try await body.collect(upTo: limit)
        do {
            return try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
        } catch let unknown as UnknownField {
            throw APIError(unknownParameter: unknown.name, known: unknown.known)
        } catch {
            throw APIError(.badRequest, .invalidBody, message: invalid(error))
        }
    }
}
