import BackbeatCore
import Hummingbird

/// `GET /v1/memory`: what this instance holds in memory, whether it answers from memory alone, and how queries
/// have been answered since it started.
struct MemoryRoute<Context: AuthenticatedRequestContext>: Sendable {
    let memory: LiveMemory?
    let registry: InstanceRegistry?

    struct MemoryResponse: ResponseEncodable {
        var enabled: Bool
        /// Whether this instance owns every partition and has loaded the retained window (memory alone answers).
        var complete: Bool
        /// This instance's name among the instances of the group (nil: not taking part in one).
        var instance_id: String?
        /// How many partitions memory holds whole: an artist whose messages all arrive on them is answered from
        /// memory here.
        var loaded_partitions: Int
        /// The live instances of the group as this one last read them (itself included), with the partitions each
        /// holds whole: where artist queries are forwarded.
        var instances: [Instance]
        /// The first day held in memory (earlier days come from PostgreSQL); nil before the window is loaded.
        var horizon: String?
        var days_held: Int
        var bytes: Int
        var budget_bytes: Int
        var sealed_bytes: Int
        var sealed_nonzero_cells: Int
        var bytes_per_nonzero_cell: Double?
        var answered_from_memory: Int
        var answered_from_memory_and_postgres: Int
        var answered_from_postgres: Int
        /// Dashboard answers served from the answer cache, kept from an earlier request.
        var answered_from_cache: Int
        /// Artist queries sent to the instance holding the artist in memory and answered there; failures were
        /// answered here.
        var forwarded: Int
        var forward_failures: Int
        var snapshots_loaded: Int
        var days_sealed: Int
        var days_dropped: Int
    }

    struct Instance: Encodable {
        var id: String
        var address: String
        var loaded_partitions: Int
    }

    func add(to group: RouterGroup<Context>) {
        group.get("memory") { request, context in
            try context.requireAdmin()
            try request.requireKnownParameters([])
            return response()
        }
    }

    func response() -> MemoryResponse {
        let instances = (registry?.liveInstances ?? []).map { Instance(id: $0.id, address: $0.address, loaded_partitions: $0.loaded.count) }
        guard let memory else {
            return MemoryResponse(
                enabled: false, complete: false, instance_id: registry?.configuration.instanceID, loaded_partitions: 0, instances: instances, horizon: nil, days_held: 0, bytes: 0, budget_bytes: 0, sealed_bytes: 0,
                sealed_nonzero_cells: 0, bytes_per_nonzero_cell: nil, answered_from_memory: 0, answered_from_memory_and_postgres: 0,
                answered_from_postgres: 0, answered_from_cache: 0, forwarded: 0, forward_failures: 0, snapshots_loaded: 0, days_sealed: 0,
                days_dropped: 0)
        }
        let layers = memory.snapshot()
        let answers = memory.answerCounts
        let footprint = layers.durable.sealedFootprint
        let loaded = layers.snapshotsLoaded > 0
        return MemoryResponse(
            enabled: true, complete: layers.complete, instance_id: registry?.configuration.instanceID,
            loaded_partitions: layers.loaded.count, instances: instances,
            horizon: loaded ? RFC3339.formatDate(CivilDate(daysSinceEpoch: layers.durable.horizonDay)) : nil,
            days_held: layers.daysHeld,
            bytes: layers.byteCount,
            budget_bytes: memory.configuration.budgetBytes,
            sealed_bytes: footprint.bytes, sealed_nonzero_cells: footprint.nonZeroCells,
            bytes_per_nonzero_cell: footprint.nonZeroCells == 0 ? nil : (Double(footprint.bytes) / Double(footprint.nonZeroCells) * 100).rounded() / 100,
            answered_from_memory: answers.fromMemory,
            answered_from_memory_and_postgres: answers.fromMemoryAndPostgres,
            answered_from_postgres: answers.fromPostgres,
            answered_from_cache: answers.fromCache,
            forwarded: answers.forwarded, forward_failures: answers.forwardFailures,
            snapshots_loaded: layers.snapshotsLoaded, days_sealed: layers.daysSealed, days_dropped: layers.daysDropped)
    }
}
