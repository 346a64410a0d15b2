import BackbeatCore
import BackbeatStore
import Synchronization

/// The partitions each artist's messages arrive on (`artist_partitions`, stored by the flushes), kept for
/// `timeToLive`: a dashboard's burst of queries for one artist asks PostgreSQL once. With producers keyed by artist
/// an artist's partitions never change after its first event; a new pair is seen here at most `timeToLive` late.
final class ArtistPartitionCache: Sendable {
    let store: Store
    let timeToLive: Duration
    /// Entries beyond which the cache starts again empty.
    static let capacity = 100_000
    private let entries = Mutex<[String: (partitions: Set<TopicPartition>, read: ContinuousClock.Instant)]>([:])

    init(store: Store, timeToLive: Duration = .seconds(1)) {
        self.store = store
        self.timeToLive = timeToLive
    }

    func partitions(of artistID: String) async throws -> Set<TopicPartition> {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[artistID] }), now - entry.read < timeToLive { return entry.partitions }
        let partitions = try await store.partitions(ofArtist: artistID)
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[artistID] = (partitions, now)
        }
        return partitions
    }
}
