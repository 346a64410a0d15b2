import BackbeatCore
import NIOCore
import Synchronization

/// Encoded answers of the artist endpoints, each reused while nothing it read changed: the artist's stamp over the
/// days and event families it read in the memory layers (`MemoryLayers.stamp(of:reading:days:)`) and the UTC day
/// (answers default to today) are those it was made under.
/// Only answers memory held whole are kept (`QueryService`), large ones compressed (`AnswerBody`). Bounded by
/// `capacityBytes` of what is held: the oldest entries go first.
final class AnswerCache: Sendable {
    struct Validity: Sendable, Hashable {
        var stamp: ArtistVersions.Stamp
        var day: Int64
    }

    private struct Entry {
        var validity: Validity
        var body: AnswerBody
    }

    /// An answer being made under one validity.
    private struct MakingKey: Hashable {
        var key: String
        var validity: Validity
    }

    private struct State {
        var entries: OldestFirstEntries<String, Entry>
        /// The answers being made, each with the requests waiting for it. One answer may be made under two
        /// validities at once (the artist changed while the first was made); requests share the making of their own.
        var making: [MakingKey: [CheckedContinuation<AnswerBody?, Never>]] = [:]
    }

    let capacityBytes: Int
    private let metrics: ServiceMetrics?
    private let state: Mutex<State>
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)
    private let sharedCount = Atomic<Int>(0)

    /// nil when `bytes` is 0: nothing is kept.
    init?(bytes: Int, metrics: ServiceMetrics?) {
        guard bytes > 0 else { return nil }
        self.capacityBytes = bytes
        self.metrics = metrics
        self.state = Mutex(State(entries: OldestFirstEntries(capacityBytes: bytes)))
    }

    /// The answer for `key` under `validity`: the one kept; else the one another request is making under the same
    /// validity, awaited (a burst of requests for one answer makes it once, even while an older making of it under
    /// another validity runs); else the one `make` makes here, kept when `make` says it may be (nothing of the
    /// artist changed while it was made). A body kept is compressed when large (`AnswerBody`), and is answered as kept.
    func answer(_ key: String, _ validity: Validity, make: () async throws -> (body: ByteBuffer, keep: Bool)) async throws -> AnswerBody {
        let making = MakingKey(key: key, validity: validity)
        let role = state.withLock { state -> Role in
            if let entry = state.entries[key], entry.validity == validity { return .kept(entry.body) }
            if state.making[making] != nil { return .waiter }
            state.making[making] = []
            return .maker
        }
        metrics?.recordAnswerLookup(role.outcome)
        switch role {
        case .kept(let kept):
            hitCount.add(1, ordering: .relaxed)
            return kept
        case .waiter:
            sharedCount.add(1, ordering: .relaxed)
            if let shared = await madeElsewhere(making) { return shared }
            return AnswerBody(plain: try await make().body)
        case .maker:
            missCount.add(1, ordering: .relaxed)
            let made: (body: ByteBuffer, keep: Bool)
            do {
                made = try await make()
            } catch {
                finish(making, nil, keep: false)
                throw error
            }
            let answer = made.keep ? AnswerBody(compressing: made.body) : AnswerBody(plain: made.body)
            finish(making, answer, keep: made.keep)
            return answer
        }
    }

    private enum Role {
        case kept(AnswerBody)
        /// Another request makes it under the same validity.
        case waiter
        case maker

        var outcome: String {
            switch self {
            case .kept: "hit"
            case .waiter: "shared"
            case .maker: "miss"
            }
        }
    }

    /// The answer the request of `making` made, once it is made; nil when it failed.
    private func madeElsewhere(_ making: MakingKey) async -> AnswerBody? {
        await withCheckedContinuation { (waiter: CheckedContinuation<AnswerBody?, Never>) in
            let ready = state.withLock { state -> AnswerBody?? in
                // Still being made: wait with the others (the append happens only when it is).
                if state.making[making]?.append(waiter) != nil { return .none }
                // Made meanwhile: kept, or failed or retired (nil: make it here).
                if let entry = state.entries[making.key], entry.validity == making.validity { return .some(entry.body) }
                return .some(nil)
            }
            if let ready { waiter.resume(returning: ready) }
        }
    }

    /// The `making` ended: its waiters get its answer (nil when it failed), which is kept when `keep`.
    private func finish(_ making: MakingKey, _ answer: AnswerBody?, keep: Bool) {
        let kept = keep ? answer : nil
        let (waiters, bytes) = state.withLock { state in
            let waiters = state.making.removeValue(forKey: making) ?? []
            if let kept {
                state.entries.store(Entry(validity: making.validity, body: kept), for: making.key, bytes: Self.size(making.key, kept))
            }
            return (waiters, state.entries.bytes)
        }
        if kept != nil { metrics?.recordAnswerCacheBytes(bytes) }
        for waiter in waiters { waiter.resume(returning: answer) }
    }

    /// Lookups answered from the cache, made here, and answered by another request's making.
    var statistics: (hits: Int, misses: Int, shared: Int) {
        (hitCount.load(ordering: .relaxed), missCount.load(ordering: .relaxed), sharedCount.load(ordering: .relaxed))
    }

    /// Bytes held: entries, as `size` counts them.
    var bytesKept: Int { state.withLock { $0.entries.bytes } }

    /// Bytes an entry is counted for: its key, its body as kept and some bookkeeping.
    private static func size(_ key: String, _ body: AnswerBody) -> Int {
        key.utf8.count * 2 + body.keptBytes + 96
    }
}
