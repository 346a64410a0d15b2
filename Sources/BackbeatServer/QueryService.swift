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
}
