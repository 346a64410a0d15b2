/// The `event_id`s one partition has counted recently, by event time: what tells a resent event from a new one.
///
/// An id is remembered until the newest event time the window has seen passes its `occurred_at` by its family's
/// span (48 hours for streams by default, 30 days for revenue and social): event time, not the wall clock, so that
/// a backlog or a replay keeps the same window the live stream had. An event older than that is counted without
/// being looked up (`beyondWindow`): its id may have been forgotten, and remembering every id forever is what makes
/// the peers' dedup run out of memory.
///
/// Each id costs `bytesPerID` (its fingerprint, its expiry and its place in the expiry order). Ids are 64-bit hashes
/// of `event_id`: two different ids collide with probability about n²/2⁶⁵ for n ids remembered (one in 3.7 million
/// for 100 million ids); a collision makes the later event look like a resend (same payload, dropped) or a
/// conflict (rejected with its reason), never a silent double count.
public struct DedupWindow: Equatable, Sendable {
    /// What became of one event.
    public enum Verdict: Equatable, Sendable {
        /// Not seen within the window: count it (and it is remembered).
        case new
        /// Seen with the same payload: a resend, not counted again.
        case duplicate
        /// Seen with another payload: the ingest rejects it, with a reason of its own.
        case conflict
        /// Older than the window: counted, not remembered, and counted apart in the metrics.
        case beyondWindow
    }

    private typealias Entry = DedupTable.Entry

    /// One remembered id as it is stored: its fingerprint and when the window forgets it (seconds of event time).
    public struct Remembered: Equatable, Sendable {
        public var fingerprint: EventFingerprint
        public var expiresAt: Int64

        public init(fingerprint: EventFingerprint, expiresAt: Int64) {
            self.fingerprint = fingerprint
            self.expiresAt = expiresAt
        }
    }

    /// Bytes one remembered id costs: its entry in the table (id, payload, expiry, with the table's spare room) and
    /// its place in the expiry order.
    public static let bytesPerID = 48

    private var entries = DedupTable()
    /// Ids by the hour (of event time) they expire in, so that pruning visits only what expires.
    private var expiring: [Int64: [UInt64]] = [:]
    /// The newest `occurred_at` seen, in seconds (nil: nothing seen).
    public private(set) var newestEventTime: Int64?
    /// The hour of event time the last pruning ran in: it runs again once the newest event time leaves it.
    private var prunedIn: Int64 = .min

    /// Ids remembered since the last `takeAdded`: what the next flush stores beside its offsets.
    private var added: [Remembered] = []
    /// Whether `added` is kept (not for a window that is never stored).
    private var keepsAdded = true

    public init() {}

    /// A window that is never stored (a plain input's, a rebuild's): it keeps no list of what it added.
    public static var unstored: DedupWindow {
        var window = DedupWindow()
        window.keepsAdded = false
        return window
    }

    /// A window that remembers `stored` (what the flushes stored, `takeAdded`), as of the newest event time they
    /// saw: an owner's window loaded before it consumes. What expired by then is left out.
    public init(loading stored: some Sequence<Remembered>, newestEventTime: Int64?) {
        self.newestEventTime = newestEventTime
        for remembered in stored where newestEventTime.map({ remembered.expiresAt >= $0 }) ?? true {
            remember(remembered)
        }
    }

    /// Ids remembered.
    public var count: Int { entries.count }

    /// Bytes held, at `bytesPerID` an id.
    public var byteCount: Int { entries.count * Self.bytesPerID }

    /// Looks up `fingerprint`, of an event that occurred at `occurredAt` (seconds) in a family remembered for
    /// `span` seconds, and remembers it when it is new. Forgets what expired as event time moves on.
    public mutating func admit(_ fingerprint: EventFingerprint, occurredAt: Int64, span: Int64) -> Verdict {
        let expiresAt = occurredAt + span
        let newest = newestEventTime ?? .min
        if expiresAt < newest { return .beyondWindow }
        // One lookup of the id: it finds what is remembered or the place to remember it.
        let verdict = entries.update(fingerprint.id) { Self.lookUp(fingerprint, expiresAt: expiresAt, newest: newest, in: &$0) }
        guard verdict == .new else { return verdict }
        scheduleExpiry(of: fingerprint.id, at: expiresAt)
        if keepsAdded { added.append(Remembered(fingerprint: fingerprint, expiresAt: expiresAt)) }
        if occurredAt > newest {
            newestEventTime = occurredAt
            forgetExpired()
        }
        return .new
    }

    /// The verdict on `fingerprint` given what its id's `entry` holds; a new one is put in `entry`. An id whose own
    /// expiry passed is forgotten, pruned yet or not: a window loaded again answers the same.
    private static func lookUp(_ fingerprint: EventFingerprint, expiresAt: Int64, newest: Int64, in entry: inout Entry?) -> Verdict {
        if let seen = entry, seen.expiresAt >= newest {
            return seen.payload == fingerprint.payload ? .duplicate : .conflict
        }
        entry = Entry(payload: fingerprint.payload, expiresAt: expiresAt)
        return .new
    }

    private mutating func remember(_ remembered: Remembered) {
        entries.set(remembered.fingerprint.id, Entry(payload: remembered.fingerprint.payload, expiresAt: remembered.expiresAt))
        scheduleExpiry(of: remembered.fingerprint.id, at: remembered.expiresAt)
    }

    /// Files `id` under the hour of event time it expires in, for `forget(hour:)`.
    private mutating func scheduleExpiry(of id: UInt64, at expiresAt: Int64) {
        expiring[expiresAt.floorDiv(3600), default: []].append(id)
    }

    /// Takes the ids remembered since the last call, oldest first: a flush stores them with its offsets.
    public mutating func takeAdded() -> [Remembered] {
        defer { added.removeAll() }
        return added
    }

    /// Puts back what a flush took (`takeAdded`) and failed to store, ahead of what was added since.
    public mutating func putBack(_ taken: [Remembered]) {
        added.insert(contentsOf: taken, at: 0)
    }

    /// Forgets ids nearest their expiry, whole hours of them, until at most `limit` are left (the memory budget):
    /// a resend of one of them is counted again. Answers how many were forgotten.
    public mutating func forgetEarly(keepingAtMost limit: Int) -> Int {
        let before = entries.count
        while entries.count > limit, let hour = expiring.keys.min() {
            forget(hour: hour)
        }
        return before - entries.count
    }

    /// Forgets the ids whose expiry hour ended before the newest event time. An id of the current hour stays until
    /// the hour is over: the window is never shorter than its span.
    private mutating func forgetExpired() {
        guard let newest = newestEventTime else { return }
        let current = newest.floorDiv(3600)
        guard current > prunedIn else { return }
        prunedIn = current
        for hour in expiring.keys.filter({ $0 < current }) { forget(hour: hour) }
    }

    /// Forgets the ids that expire in `hour`. An id remembered again since (its old entry expired, a new event took
    /// its place, expiring in another hour) stays.
    private mutating func forget(hour: Int64) {
        for id in expiring.removeValue(forKey: hour) ?? [] {
            entries.remove(id) { $0.expiresAt.floorDiv(3600) == hour }
        }
    }
}
