import Hummingbird

/// Requires `Authorization: Bearer <token>` matching the admin token, compared in constant time.
struct AuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let adminToken: [UInt8]

    init(adminToken: String) {
        self.adminToken = Array(adminToken.utf8)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, code: "unauthorized", message: "send Authorization: Bearer <token>")
        }
        let prefix = "Bearer "
        guard header.hasPrefix(prefix), Self.constantTimeEqual(Array(header.utf8.dropFirst(prefix.utf8.count)), adminToken) else {
            throw APIError(.unauthorized, code: "unauthorized", message: "the bearer token is not valid")
        }
        return try await next(request, context)
    }

    /// Compares without stopping at the first difference, so timing does not reveal how much of a guess matched.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: lhs.count ^ rhs.count)
        for index in 0..<max(lhs.count, rhs.count) {
            let a = index < lhs.count ? lhs[index] : 0
            let b = index < rhs.count ? rhs[index] : 0
            difference |= a ^ b
        }
        return difference == 0 && !rhs.isEmpty
    }
}
