import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends `Authorization: Bearer <token>` with every request of a generated `Client` (the generator leaves
/// authentication to middleware).
public struct BearerToken: ClientMiddleware {
    let token: String

    public init(_ token: String) {
        self.token = token
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}
