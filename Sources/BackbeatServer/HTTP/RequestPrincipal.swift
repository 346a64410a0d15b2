import Hummingbird

/// Who a request acts for, as its bearer token says.
public enum Principal: Sendable, Equatable {
    /// The admin token: every artist, every endpoint.
    case admin
    /// An artist token: that artist's numbers only.
    case artist(String)

    /// Whether this principal may read `artistID`'s numbers.
    func mayRead(_ artistID: String) -> Bool {
        switch self {
        case .admin: true
        case .artist(let own): own == artistID
        }
    }
}

/// A request context that carries the principal the auth middleware found.
public protocol AuthenticatedRequestContext: RequestContext {
    var principal: Principal? { get set }
}

/// The request context of Backbeat's router.
public struct BackbeatRequestContext: PlannedRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var principal: Principal?
    public var plan: QueryPlan?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.principal = nil
        self.plan = nil
    }
}

extension AuthenticatedRequestContext {
    /// Throws 403 unless the principal may read `artistID`.
    func requireRead(_ artistID: String) throws {
        guard principal?.mayRead(artistID) == true else {
            throw APIError(.forbidden, .forbidden, message: "this token may not read artist \(artistID)")
        }
    }

    /// Throws 403 unless the principal is the admin.
    func requireAdmin() throws {
        guard principal == .admin else {
            throw APIError(.forbidden, .forbidden, message: "this endpoint needs the admin token")
        }
    }
}
