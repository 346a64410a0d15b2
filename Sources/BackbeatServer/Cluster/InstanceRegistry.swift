import AsyncHTTPClient
import BackbeatCore
import BackbeatStore
import Logging
import ServiceLifecycle
import Synchronization

/// Records this instance in PostgreSQL every heartbeat (its address and the partitions it holds whole in memory)
/// and keeps the live instances as of the last heartbeat, to find the one that holds an artist. A graceful stop
/// removes the record, so that queries stop going here before the partitions move; a crash leaves it to age out
/// (`ClusterConfiguration.liveWithin`).
final class InstanceRegistry: Service, Sendable {
    let configuration: ClusterConfiguration
    let store: Store
    /// Whether PostgreSQL answers at the stop: the record is removed only if it does.
    let postgresAtStop: PostgresAtStop
    let memory: LiveMemory?
    let logger: Logger
    /// The live instances, this one included, as of the last heartbeat.
    private let live = Mutex<[InstanceRecord]>([])
    /// Forwards queries to the other instances (`ArtistForwarding`); shut down when the registry stops, after the
    /// HTTP server.
    let client: HTTPClient

    /// Connections kept open to each other instance: as many as the dashboards' concurrent queries, so that
    /// forwarded queries do not queue for one.
    static let connectionsPerInstance = 64

    init(configuration: ClusterConfiguration, store: Store, memory: LiveMemory?, logger: Logger, postgresAtStop: PostgresAtStop) {
        self.configuration = configuration
        self.postgresAtStop = postgresAtStop
        self.store = store
        self.memory = memory
        self.logger = logger
        var client = HTTPClient.Configuration()
        client.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: Self.connectionsPerInstance)
        client.timeout = .init(connect: .seconds(1))
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
    }

    func run() async throws {
        var failing = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let record = InstanceRecord(id: configuration.instanceID, address: configuration.advertisedURL, loaded: memory?.loadedPartitions ?? [])
                let instances = try await postgresAtStop.cancellingIfUnanswered { [store, configuration] in
                    try await store.heartbeat(record, liveWithin: configuration.liveWithin)
                }
                live.withLock { $0 = instances }
                if failing { logger.notice("instance heartbeat recorded again") }
                failing = false
            } catch {
                // Without heartbeats the others stop forwarding here, and this one stops forwarding: answers stay
                // exact, from PostgreSQL where memory does not hold them.
                live.withLock { $0 = [] }
                if !failing { logger.warning("cannot record the instance heartbeat; not forwarding queries until it can", metadata: ["error": "\(error)"]) }
                failing = true
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.configuration.heartbeatInterval) }
            } catch {
                break
            }
        }
        live.withLock { $0 = [] }
        do {
            guard await postgresAtStop.answers() else { throw PostgresDoesNotAnswer() }
            try await store.removeInstance(configuration.instanceID)
        } catch {
            logger.warning("cannot remove this instance's record; the others stop asking it once its heartbeat ages out", metadata: ["error": "\(error)"])
        }
        try? await client.shutdown()
    }

    /// The live instances as of the last heartbeat, this one included.
    var liveInstances: [InstanceRecord] { live.withLock { $0 } }

    /// Another live instance that holds every one of `partitions` whole in memory (nil: none, or `partitions` is empty).
    func owner(of partitions: Set<TopicPartition>) -> InstanceRecord? {
        guard !partitions.isEmpty else { return nil }
        return live.withLock { instances in
            instances.first { $0.id != configuration.instanceID && partitions.isSubset(of: $0.loaded) }
        }
    }
}
