import BackbeatCore
import Foundation
import Hummingbird
import NIOCore

/// An error a client sees: an HTTP status and `{"error":{"code","message"}}` with a stable code (docs/api.md).
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// Seconds after which a retry may succeed (`Retry-After`), for 429s.
    public var retryAfter: Int?
    /// The methods the path takes (`Allow`), for 405s.
    var allowed: [String] = []

    public init(_ status: HTTPResponse.Status, code: String, message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    /// Every code of an error that is not a refused query (those carry a `QueryError.Code`); docs/api.md documents
    /// each (checked by a test over `allCases`).
    public enum Code: String, CaseIterable, Sendable {
        case invalidBody = "invalid_body"
        case badRequest = "bad_request"
        case unauthorized
        case forbidden
        case rateLimited = "rate_limited"
        case notFound = "not_found"
        case methodNotAllowed = "method_not_allowed"
        case bodyTooLarge = "body_too_large"
        /// A time zone name the zone database does not hold.
        case unknownZone = "unknown_zone"
        /// A change of zone that would leave the artist's stored days in the zone before.
        case internalError = "internal_error"
    }

    public init(_ status: HTTPResponse.Status, _ code: Code, message: String, retryAfter: Int? = nil) {
        self.init(status, code: code.rawValue, message: message, retryAfter: retryAfter)
    }

    /// A 400 for a query the core's model refused.
    public init(_ error: QueryError) {
        self.init(.badRequest, code: error.code.rawValue, message: error.message)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var body = ByteBuffer()
        let encoded = try JSONEncoder().encode(["error": ["code": code, "message": message]])
        body.writeBytes(encoded)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if !allowed.isEmpty { headers[.allow] = allowed.joined(separator: ", ") }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}

/// Renders every error as JSON: API errors as they are, framework errors by status (a known path asked with another
/// method a 405 naming the methods it takes), anything else as a 500 whose details stay in the log.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            if error.status == .notFound {
                let allowed = routes.methods(for: request.uri.path)
                if !allowed.isEmpty {
                    var refused = APIError(.methodNotAllowed, .methodNotAllowed,
                                           message: "\(request.uri.path) takes \(allowed.joined(separator: ", ")), not \(request.method)")
                    refused.allowed = allowed
                    throw refused
                }
            }
            let (code, message): (APIError.Code, String) = switch error.status {
            case .notFound: (.notFound, "no such route: \(request.method) \(request.uri.path)")
            case .contentTooLarge: (.bodyTooLarge, "the request body is larger than \(QueryRoutes<BackbeatRequestContext>.maxBodyBytes) bytes")
            default: (error.status.code < 500 ? .badRequest : .internalError, error.body ?? error.status.reasonPhrase)
            }
            throw APIError(error.status, code, message: message)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, .bodyTooLarge, message: "the request body is larger than \(QueryRoutes<BackbeatRequestContext>.maxBodyBytes) bytes")
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            throw APIError(.internalServerError, .internalError, message: "the request could not be answered; see the service log")
        }
    }
}
