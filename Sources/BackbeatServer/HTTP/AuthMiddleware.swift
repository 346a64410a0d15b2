import BackbeatStore
import Foundation
import Hummingbird
import Synchronization

/// Requires `Authorization: Bearer <token>`: the admin token (compared in constant time) or a live artist token
/// (looked up by its hash), and records the principal in the context. Artist tokens are rate limited (429 with
/// `Retry-After`); the admin token is not.
struct AuthMiddleware<Context: AuthenticatedRequestContext>: RouterMiddleware {
    let adminToken: [UInt8]
    let artistTokens: ArtistTokenCache
    /// nil: no limit.
    let artistLimiter: RateLimiter?

    init(adminToken: String, store: Store, artistRequestsPerSecond: Double) {
        self.adminToken = Array(adminToken.utf8)
        self.artistTokens = ArtistTokenCache(store: store)
        self.artistLimiter = artistRequestsPerSecond > 0
            ? RateLimiter(rate: artistRequestsPerSecond, burst: max(1, 2 * artistRequestsPerSecond)) : nil
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, .unauthorized, message: "send Authorization: Bearer <token>")
        }
        let prefix = "Bearer "
        guard header.hasPrefix(prefix) else {
            throw APIError(.unauthorized, .unauthorized, message: "the bearer token is not valid")
        }
        let token = String(header.dropFirst(prefix.count))
        var context = context
        if Self.constantTimeEqual(Array(token.utf8), adminToken) {
            context.principal = .admin
        } else if APIToken.isWellFormed(token), case let hash = APIToken.hash(token), let artist = try await artistTokens.artist(forHash: hash) {
            if let wait = artistLimiter?.take(hash) {
                throw APIError(.tooManyRequests, .rateLimited,
                               message: "more than \(artistLimiter!.rate) requests per second for this token; retry after \(wait) s", retryAfter: wait)
            }
            context.principal = .artist(artist)
        } else {
            throw APIError(.unauthorized, .unauthorized, message: "the bearer token is not valid")
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

/// Artist tokens by hash, each answer (found or not) kept for `lifetime`, so a busy dashboard costs PostgreSQL one
/// lookup per token per lifetime; a revocation takes effect within it.
final class ArtistTokenCache: Sendable {
    static let lifetime: Duration = .seconds(5)
    private let store: Store
    private let entries = Mutex<[[UInt8]: (artist: String?, until: ContinuousClock.Instant)]>([:])

    init(store: Store) {
        self.store = store
    }

    /// The artist of the live token whose SHA-256 is `hash`, or nil.
    func artist(forHash hash: [UInt8]) async throws -> String? {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[hash] }), entry.until > now { return entry.artist }
        let artist = try await store.artistID(forTokenHash: hash)
        entries.withLock {
            if $0.count > 10_000 { $0.removeAll() }  // bounded: random guesses cannot grow it without limit
            $0[hash] = (artist, now + Self.lifetime)
        }
        return artist
    }
}
