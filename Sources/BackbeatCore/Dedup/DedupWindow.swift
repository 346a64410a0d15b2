/// The `event_id`s one partition has counted recently, by event time: what tells a resent event from a new one.
///
/// An id is remembered until the newest event time the window has seen passes its `occurred_at` by its family's
/// span (48 hours for streams by default, 30 days for revenue and social): event time, not the wall clock, so that
/// a backlog or a replay keeps the same window the live stream had. An event older than that is counted without
/// being looked up (`beyondWindow`): its id may have been forgotten, and remembering every id forever is what makes
/// the peers' dedup run out of memory.
///
/// Ids live in one open-addressing table (`DedupTable`, 24 bytes a slot); what expired is swept out of it in one pass
/// once an eighth of the table was remembered since the last sweep, so no list of what expires when is kept beside
/// the ids. The budget counts `bytesPerID` an id; `byteCount` is what is held. Ids are 64-bit hashes
/// of `event_id`: two different ids collide with probability about n²/2⁶⁵ for n ids remembered (one in 3.7 million
/// for 100 million ids); a collision makes the later event look like a resend (same payload, dropped) or a
/// conflict (rejected with its reason), never a silent double count.
public struct DedupWindow: Sendable {
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

    /// Bytes the budget counts for one remembered id: its 24-byte slot in a table just grown (3/8 full). A table
    /// emptied by expiry halves once under 3/16 full, so between sweeps an id may cost up to twice this; `byteCount`
    /// is what the window holds.
    public static let bytesPerID = 64

    private var entries = DedupTable()
    /// The newest `occurred_at` seen, in seconds (nil: nothing seen).
    public private(set) var newestEventTime: Int64?
    /// No entry expires before this (seconds of event time): while the newest event time has not passed it, a sweep
    /// would forget nothing.
    private var earliestExpiry: Int64 = .max
    /// Ids remembered since the last sweep of expired ids: a sweep runs once they are an eighth of the table.
    private var rememberedSinceSweep = 0

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

    /// Ids held: those remembered, and those expired since the last sweep (at most an eighth more).
    public var count: Int { entries.count }

    /// Bytes held: the table's slots and the ids waiting for a flush.
    public var byteCount: Int { entries.byteCount + added.capacity * MemoryLayout<Remembered>.stride }

    /// Looks up `fingerprint`, of an event that occurred at `occurredAt` (seconds) in a family remembered for
    /// `span` seconds, and remembers it when it is new. Forgets what expired as event time moves on.
    public mutating func admit(_ fingerprint: EventFingerprint, occurredAt: Int64, span: Int64) -> Verdict {
        let expiresAt = occurredAt + span
        let newest = newestEventTime ?? .min
        if expiresAt < newest { return .beyondWindow }
        // One lookup of the id: it finds what is remembered or the place to remember it.
        let verdict = entries.update(fingerprint.id) { Self.lookUp(fingerprint, expiresAt: expiresAt, newest: newest, in: &$0) }
        guard verdict == .new else { return verdict }
        earliestExpiry = min(earliestExpiry, expiresAt)
        rememberedSinceSweep += 1
        if keepsAdded { added.append(Remembered(fingerprint: fingerprint, expiresAt: expiresAt)) }
        let newestNow = max(newest, occurredAt)
        newestEventTime = newestNow
        if rememberedSinceSweep * 8 >= entries.count, earliestExpiry < newestNow { forgetExpired() }
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
        earliestExpiry = min(earliestExpiry, remembered.expiresAt)
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
    /// a resend of one of them is counted again. Answers how many were forgotten (expired ids are not counted).
    public mutating func forgetEarly(keepingAtMost limit: Int) -> Int {
        forgetExpired()
        guard entries.count > limit else { return 0 }
        var idsByHour: [Int64: Int] = [:]
        entries.forEachEntry { idsByHour[$0.expiresAt.floorDiv(3600), default: 0] += 1 }
        var left = entries.count, lastHour = Int64.min
        for (hour, ids) in idsByHour.sorted(by: { $0.key < $1.key }) where left > limit {
            left -= ids
            lastHour = hour
        }
        return entries.removeAll { $0.expiresAt.floorDiv(3600) <= lastHour }
    }

    /// Forgets the ids whose expiry the newest event time has passed, in one sweep of the table: they answer
    /// nothing any more (`lookUp` treats them as forgotten), so when they go changes no verdict, only memory.
    private mutating func forgetExpired() {
        rememberedSinceSweep = 0
        guard let newest = newestEventTime, earliestExpiry < newest else { return }
        var earliest = Int64.max
        entries.removeAll { entry in
            if entry.expiresAt < newest { return true }
            earliest = min(earliest, entry.expiresAt)
            return false
        }
        earliestExpiry = earliest
    }
}

extension DedupWindow: Equatable {
    /// The same ids with the same entries, newest event time and ids waiting for a flush, however often each was swept.
    public static func == (lhs: DedupWindow, rhs: DedupWindow) -> Bool {
        var lhs = lhs, rhs = rhs
        lhs.forgetExpired()
        rhs.forgetExpired()
        return lhs.entries == rhs.entries && lhs.newestEventTime == rhs.newestEventTime && lhs.added == rhs.added
            && lhs.keepsAdded == rhs.keepsAdded
    }
}
