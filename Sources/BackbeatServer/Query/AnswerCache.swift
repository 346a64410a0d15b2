import BackbeatCore
import NIOCore
import Synchronization

/// Encoded answers of the artist endpoints, each reused while nothing it read changed: the artist's stamp over the
/// days it read in the event families its making read (`QueryService.Reads` records them; `ArtistVersions.Stamps`)
/// and the UTC day (answers default to today) are those it was made under.
/// Only answers memory held whole are kept (`QueryService`), large ones compressed (`AnswerBody`). Bounded by
/// `capacityBytes` of what is held: the oldest entries go first.
final class AnswerCache: Sendable {
    /// What a request finds the artist's numbers at: the stamps of every family over the UTC days it reads, those
    /// days, and the day.
    struct Validity: Sendable, Hashable {
        var stamps: ArtistVersions.Stamps
        var days: Range<Int64>
        var day: Int64
    }

    private struct Entry {
        /// The families its making read, and their stamp then over `days`.
        var families: ArtistVersions.Families
        var stamp: ArtistVersions.Stamp
        var days: Range<Int64>
        var day: Int64
        var body: AnswerBody

        /// Nothing it read changed as of `validity`.
        func holds(under validity: Validity) -> Bool {
            holds(under: validity.stamps, days: validity.days, day: validity.day)
        }

        /// Nothing it read changed as of `stamps` over `days`, on `day`.
        func holds(under stamps: ArtistVersions.Stamps, days: Range<Int64>, day: Int64) -> Bool {
            self.day == day && self.days == days && stamp == stamps.stamp(reading: families)
        }
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

    /// The answer kept for `key`, when nothing it read changed as `stamps` (the artist's stamps over the days it
    /// read, nil when they cannot be told) finds it on `day`; nil otherwise (counted as nothing: the request goes on
    /// to `answer(_:_:make:)`, which counts its lookup). What a request knows of an answer before it parses anything.
    func kept(_ key: String, day: Int64, stamps: (Range<Int64>) -> ArtistVersions.Stamps?) -> AnswerBody? {
        guard let entry = state.withLock({ $0.entries[key] }), let now = stamps(entry.days),
              entry.holds(under: now, days: entry.days, day: day) else { return nil }
        metrics?.recordAnswerLookup("hit")
        hitCount.add(1, ordering: .relaxed)
        return entry.body
    }

    /// The answer for `key` under `validity`: the one kept, if nothing it read changed; else the one another
    /// request is making under the same validity, awaited (a burst of requests for one answer makes it once, even
    /// while an older making of it under another validity runs); else the one `make` makes here, kept (under the
    /// stamp of the families it read) when `make` says it may be (nothing of the artist's in those families changed
    /// while it was made: `make` answers the families to keep it under, nil when it may not be kept). A body kept is
    /// compressed when large (`AnswerBody`), and is answered as kept.
    func answer(
        _ key: String, _ validity: Validity, make: () async throws -> (body: ByteBuffer, keptUnder: ArtistVersions.Families?)
    ) async throws -> AnswerBody {
        let making = MakingKey(key: key, validity: validity)
        let role = state.withLock { state -> Role in
            if let entry = state.entries[key], entry.holds(under: validity) { return .kept(entry.body) }
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
            let made: (body: ByteBuffer, keptUnder: ArtistVersions.Families?)
            do {
                made = try await make()
            } catch {
                finish(making, nil, keep: nil)
                throw error
            }
            let answer = made.keptUnder != nil ? AnswerBody(compressing: made.body) : AnswerBody(plain: made.body)
            finish(making, answer, keep: made.keptUnder)
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
                if let entry = state.entries[making.key], entry.holds(under: making.validity) { return .some(entry.body) }
                return .some(nil)
            }
            if let ready { waiter.resume(returning: ready) }
        }
    }

    /// The `making` ended: its waiters get its answer (nil when it failed), which is kept when it read the families
    /// `keep` (nil: not kept).
    private func finish(_ making: MakingKey, _ answer: AnswerBody?, keep families: ArtistVersions.Families?) {
        let kept = families == nil ? nil : answer
        let (waiters, bytes) = state.withLock { state in
            let waiters = state.making.removeValue(forKey: making) ?? []
            if let kept, let families {
                let entry = Entry(
                    families: families, stamp: making.validity.stamps.stamp(reading: families), days: making.validity.days,
                    day: making.validity.day, body: kept)
                state.entries.store(entry, for: making.key, bytes: Self.size(making.key, kept))
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
