import BackbeatCore
import BackbeatStore

/// Answers validated queries: rows from the store, zero-filled, ordered and limited by the core.
public struct QueryService: Sendable {
    let store: Store

    public init(store: Store) {
        self.store = store
    }

    public func answer(_ query: Query) async throws -> [QueryRow] {
        try ResultShaper.shape(try await store.rows(for: query), for: query)
    }

    /// Unique listeners per period (nil key for `all`).
    public func listeners(_ scope: ListenerScope, granularity: Granularity) async throws -> [Timestamp?: Double] {
        try await store.listeners(scope, granularity: granularity)
    }

    /// Unique listeners per track over `days`.
    public func trackListeners(artistID: String, trackIDs: [String], days: Range<Int64>) async throws -> [String: Double] {
        try await store.trackListeners(artistID: artistID, trackIDs: trackIDs, days: days)
    }
}
