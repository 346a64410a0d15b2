import BackbeatCore
import NIOCore
import Synchronization

/// Encoded answers of the artist endpoints, each reused while nothing it read changed: the artist's stamp in the
/// memory layers (`MemoryLayers.stamp(of:)`) and the UTC day (answers default to today) are those it was made under.
/// Only answers memory held whole are kept (`QueryService`). Bounded by `capacityBytes`: the oldest entries go first.
final class AnswerCache: Sendable {
    struct Validity: Sendable, Equatable {
        var stamp: ArtistVersions.Stamp
        var day: Int64
    }

    private struct Entry {
        var validity: Validity
        var body: ByteBuffer
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Keys in the order they were first stored (from `orderStart` on).
        var order: [String] = []
        var orderStart = 0
        var bytes = 0
    }

    let capacityBytes: Int
    private let metrics: ServiceMetrics?
    private let state = Mutex(State())
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    /// nil when `bytes` is 0: nothing is kept.
    init?(bytes: Int, metrics: ServiceMetrics?) {
        guard bytes > 0 else { return nil }
        self.capacityBytes = bytes
        self.metrics = metrics
    }

    /// The answer stored for `key`, if it was made under `validity`.
    func answer(_ key: String, _ validity: Validity) -> ByteBuffer? {
        let body = state.withLock { state -> ByteBuffer? in
            guard let entry = state.entries[key], entry.validity == validity else { return nil }
            return entry.body
        }
        if body == nil {
            missCount.add(1, ordering: .relaxed)
        } else {
            hitCount.add(1, ordering: .relaxed)
        }
        metrics?.recordAnswerLookup(hit: body != nil)
        return body
    }

    func store(_ key: String, _ body: ByteBuffer, _ validity: Validity) {
        let size = Self.size(key, body)
        guard size <= capacityBytes / 4 else { return }
        state.withLock { state in
            if let old = state.entries.updateValue(Entry(validity: validity, body: body), forKey: key) {
                state.bytes -= Self.size(key, old.body)
            } else {
                state.order.append(key)
            }
            state.bytes += size
            while state.bytes > capacityBytes, state.orderStart < state.order.count {
                let oldest = state.order[state.orderStart]
                state.orderStart += 1
                if let removed = state.entries.removeValue(forKey: oldest) { state.bytes -= Self.size(oldest, removed.body) }
            }
            if state.orderStart > 1024, state.orderStart * 2 > state.order.count {
                state.order.removeFirst(state.orderStart)
                state.orderStart = 0
            }
        }
    }

    var statistics: (hits: Int, misses: Int, entries: Int, bytes: Int) {
        let (entries, bytes) = state.withLock { ($0.entries.count, $0.bytes) }
        return (hitCount.load(ordering: .relaxed), missCount.load(ordering: .relaxed), entries, bytes)
    }

    /// Bytes an entry is counted for: its key, its body and some bookkeeping.
    private static func size(_ key: String, _ body: ByteBuffer) -> Int {
        key.utf8.count * 2 + body.readableBytes + 96
    }
}
