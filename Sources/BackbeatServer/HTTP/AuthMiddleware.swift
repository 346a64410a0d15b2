import BackbeatStore
import Foundation
import Hummingbird
import Synchronization

/// Requires `Authorization: Bearer <token>`: the admin token (compared in constant time) or a live artist token
/// (looked up by its hash), and records the principal in the context. Artist tokens are rate limited (429 with
/// `Retry-After`); the admin token is not.
struct AuthMiddleware<Context: AuthenticatedRequestContext>: RouterMiddleware {
    /// The whole header the admin sends, `Bearer <token>`, compared as it comes (nothing made of it per request).
    let adminHeader: [UInt8]
    let artistTokens: ArtistTokenCache
    /// nil: no limit.
    let artistLimiter: RateLimiter?

    init(adminToken: String, store: Store, artistRequestsPerSecond: Double) {
        precondition(!adminToken.isEmpty, "an admin token is required")
        self.adminHeader = Array("\(Self.bearer)\(adminToken)".utf8)
        self.artistTokens = ArtistTokenCache(store: store)
        self.artistLimiter = artistRequestsPerSecond > 0
            ? RateLimiter(rate: artistRequestsPerSecond, burst: max(1, 2 * artistRequestsPerSecond)) : nil
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, .unauthorized, message: "send Authorization: Bearer <token>")
        }
        var context = context
        if Self.constantTimeEqual(header.utf8, adminHeader) {
            context.principal = .admin
            return try await next(request, context)
        }
        guard header.hasPrefix(Self.bearer) else {
            throw APIError(.unauthorized, .unauthorized, message: "the bearer token is not valid")
        }
        let token = String(header.dropFirst(Self.bearer.count))
        if APIToken.isWellFormed(token), case let hash = APIToken.hash(token), let artist = try await artistTokens.artist(forHash: hash) {
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

    static var bearer: String { "Bearer " }

    /// Compares without stopping at the first difference, so timing does not reveal how much of a guess matched
    /// (only `expected`'s length, which is no secret).
    static func constantTimeEqual(_ sent: String.UTF8View, _ expected: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: sent.count ^ expected.count)
        var index = 0
        for byte in sent {
            difference |= byte ^ (index < expected.count ? expected[index] : 0)
            index += 1
        }
        return difference == 0
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
