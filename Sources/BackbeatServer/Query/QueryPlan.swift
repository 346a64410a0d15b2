import BackbeatCore

/// What one request's answer reads, decided once per request (`QueryService.plan(artist:)`) and carried in its
/// context from forwarding to the reads: the memory layers as of the decision, and whether they hold everything the
/// answer reads (every partition, or the one artist whole). Days before the horizon come from PostgreSQL either way.
public struct QueryPlan: Sendable {
    /// The one artist the answer is for (nil: any).
    let artist: String?
    /// The memory layers as of the decision (nil: memory is disabled).
    let layers: MemoryLayers?
    /// Whether the layers hold everything the answer reads, from the horizon on.
    let memoryHoldsAll: Bool

    /// Whether memory alone answers reads from `from` on.
    func memoryAnswersAlone(from: Timestamp) -> Bool {
        guard let layers, memoryHoldsAll else { return false }
        return from >= Timestamp(seconds: layers.durable.horizonDay * 86_400)
    }
}

/// A request context that carries the request's `QueryPlan` once it is made.
public protocol PlannedRequestContext: AuthenticatedRequestContext {
    var plan: QueryPlan? { get set }
}
