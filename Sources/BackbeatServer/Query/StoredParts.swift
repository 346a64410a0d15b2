import BackbeatCore
import BackbeatStore
import Synchronization

/// What answers read from PostgreSQL of the days before a split, kept per read and reused while the artist's stamp
/// over those days stays the one it was read under (every family). From memory, the split is the memory's (a year's
/// months are read from PostgreSQL) and the stamp the layers' (`MemoryLayers.stamp(of:reading:days:)`): the artist's
/// events of the days memory holds change an answer that ends yesterday, not what it reads of the months before, and
/// with the part kept, making it again asks PostgreSQL nothing. Without memory, the split is the day before yesterday
/// (`QueryService.Reads.freshFrom`: the artist's last three days are read afresh) and the stamp the announced changes'
/// (`StoredChangeListener`): making an answer again after the arrivals of its last days reads those days.
/// Bounded by `capacityBytes`: the oldest parts go first.
final class StoredParts: Sendable {
    /// One read of the days before the split.
    enum Key: Hashable, Sendable {
        case rows(Query)
        case listeners(ListenerScope, Granularity)
        case keyed(ListenerScope.Kind, artistID: String, keys: [String], days: Range<Int64>)
        /// A read of sketches without memory, as `Store.rowsAndSketches` answers it.
        case sketches(SketchRead)
    }

    enum Part: Sendable {
        case rows([QueryRow])
        case periodSketches([Timestamp?: HyperLogLog])
        case keyedSketches([String: HyperLogLog])
        /// The unions of a `SketchRead`, keyed as `Store.rowsAndSketches` keys them.
        case unions([String?: HyperLogLog])

        /// Bytes the part is counted for (roughly what it holds).
        var bytes: Int {
            switch self {
            case .rows(let rows): rows.reduce(64) { $0 + 64 + $1.metrics.count * 24 + $1.groupValues.reduce(0) { $0 + 16 + $1.utf8.count } }
            case .periodSketches(let sketches): sketches.values.reduce(64) { $0 + 48 + $1.byteCount }
            case .keyedSketches(let sketches): sketches.reduce(64) { $0 + 48 + $1.key.utf8.count + $1.value.byteCount }
            case .unions(let sketches): sketches.reduce(64) { $0 + 48 + ($1.key?.utf8.count ?? 0) + $1.value.byteCount }
            }
        }
    }

    private struct Entry {
        var stamp: ArtistVersions.Stamp
        var part: Part
    }

    private let entries: Mutex<OldestFirstEntries<Key, Entry>>
    private let metrics: ServiceMetrics?
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    /// nil when `bytes` is 0: nothing is kept.
    init?(bytes: Int, metrics: ServiceMetrics?) {
        guard bytes > 0 else { return nil }
        self.metrics = metrics
        entries = Mutex(OldestFirstEntries(capacityBytes: bytes))
    }

    /// The part kept for `key` under `stamp`, if any.
    func part(_ key: Key, _ stamp: ArtistVersions.Stamp) -> Part? {
        entries.withLock { entries in entries[key].flatMap { $0.stamp == stamp ? $0.part : nil } }
    }

    /// A part was found kept (`hit`), or read from PostgreSQL.
    func record(hit: Bool) {
        if hit { hitCount.add(1, ordering: .relaxed) } else { missCount.add(1, ordering: .relaxed) }
        metrics?.recordStoredPartLookup(hit: hit)
    }

    func keep(_ part: Part, for key: Key, _ stamp: ArtistVersions.Stamp) {
        let bytes = part.bytes
        entries.withLock { $0.store(Entry(stamp: stamp, part: part), for: key, bytes: bytes) }
    }

    /// Parts found kept, and parts read from PostgreSQL.
    var statistics: (hits: Int, misses: Int) {
        (hitCount.load(ordering: .relaxed), missCount.load(ordering: .relaxed))
    }
}
