/// Counts the changes to what the memory layers (or the stored numbers) answer for each artist, event family and UTC
/// day, so that an answer made from them can be reused for as long as nothing it read changed:
/// `stamp(of:reading:days:)` before the answer equals it now. A change to days the answer did not read (today's events, for an answer that
/// ends yesterday) or to a family it did not read (a stream, for a revenue answer) leaves its stamp alone.
///
/// Artists share `slotCount` counters per family by the hash of their id: a change to one artist also retires the
/// answers of the few that share its counter, never fewer. Each counter keeps the day spans of its latest changes, at
/// most `spansKept`; beyond that the two oldest are joined into one that covers both (more answers retired, never
/// fewer). A change that may touch any artist or day (a snapshot installed, a change of ownership, the stored numbers
/// replaced or dropped) moves `everything`.
public struct ArtistVersions: Sendable {
    /// Counters per family.
    public static let slotCount = 4096
    /// Counters of every family.
    static let allSlots = slotCount * Families.count
    static let spansKept = 4

    /// The families of events an answer reads, each with counters of its own: a query of the `funnel` dataset, the
    /// page's visitors and its sources read the page family; listeners and top tracks the streams family.
    public struct Families: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let streams = Families(rawValue: 1 << 0)
        public static let revenue = Families(rawValue: 1 << 1)
        public static let social = Families(rawValue: 1 << 2)
        public static let page = Families(rawValue: 1 << 3)
        public static let all: Families = [.streams, .revenue, .social, .page]
        static let count = 4

        /// The family a query of `dataset` reads.
        public init(_ dataset: Dataset) {
            switch dataset {
            case .streams: self = .streams
            case .revenue: self = .revenue
            case .social: self = .social
            case .page, .funnel: self = .page
            }
        }

        /// The family whose events the sketches of `kind` count: listeners are the streams', visitors the page's.
        public init(_ kind: ListenerScope.Kind) {
            switch kind {
            case .listeners: self = .streams
            case .visitors: self = .page
            }
        }

        /// The index of each family in the set, in order.
        var indexes: some Sequence<Int> {
            (0..<Self.count).lazy.filter { self.rawValue & (1 << $0) != 0 }
        }
    }

    /// What an answer for one artist over some days read, as of some layers.
    public struct Stamp: Sendable, Hashable {
        let everything: UInt64
        let artist: UInt64
    }

    /// The stamps of one artist over some days in each family at once, as of some layers: an answer not yet made
    /// takes them before it reads, and is kept under `stamp(reading:)` of the families it turned out to read.
    public struct Stamps: Sendable, Hashable {
        let everything: UInt64
        /// The latest change of each family (by `Families`' index) on the days. Four words, not a `SIMD4`: a value
        /// aligned to 32 bytes in an async function's frame breaks the task allocator of Swift 6.3.1 ("freed pointer
        /// was not the last allocation").
        private(set) var latest: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        init(everything: UInt64) {
            self.everything = everything
        }

        /// The stamp of an answer that read `families`.
        public func stamp(reading families: Families) -> Stamp {
            var latest: UInt64 = 0
            for family in families.indexes { latest = max(latest, self[family]) }
            return Stamp(everything: everything, artist: latest)
        }

        fileprivate(set) subscript(family: Int) -> UInt64 {
            get {
                switch family {
                case 0: latest.0
                case 1: latest.1
                case 2: latest.2
                default: latest.3
                }
            }
            set {
                switch family {
                case 0: latest.0 = newValue
                case 1: latest.1 = newValue
                case 2: latest.2 = newValue
                default: latest.3 = newValue
                }
            }
        }

        public static func == (left: Stamps, right: Stamps) -> Bool {
            left.everything == right.everything && left.latest == right.latest
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(everything)
            hasher.combine(latest.0)
            hasher.combine(latest.1)
            hasher.combine(latest.2)
            hasher.combine(latest.3)
        }
    }

    /// The latest change to some days of a counter.
    private struct Span {
        var days: ClosedRange<Int64>
        var version: UInt64
    }

    /// The spans of each counter that changed (a sparse table: most counters never do).
    private var spans: [Int: [Span]] = [:]
    private var version: UInt64 = 0
    private var everything: UInt64 = 0

    public init() {}

    /// The stamp of an answer for `artist` that read `families` on the UTC days `days`.
    public func stamp(of artist: String, reading families: Families, days: Range<Int64>) -> Stamp {
        stamps(of: artist, days: days).stamp(reading: families)
    }

    /// The stamps of answers for `artist` on the UTC days `days`, of each family.
    public func stamps(of artist: String, days: Range<Int64>) -> Stamps {
        var stamps = Stamps(everything: everything)
        guard !days.isEmpty, !spans.isEmpty else { return stamps }
        let read = days.lowerBound...(days.upperBound - 1)
        let artistSlot = Self.artistSlot(of: artist)
        for family in 0..<Families.count {
            guard let changes = spans[Self.slot(artistSlot, family: family)] else { continue }
            for change in changes where change.days.overlaps(read) { stamps[family] = max(stamps[family], change.version) }
        }
        return stamps
    }

    /// The days of `changed` changed, for each of its artists.
    public mutating func changed(_ changed: ArtistDays) {
        guard !changed.isEmpty else { return }
        version &+= 1
        for (slot, days) in changed.spans { record(days, in: slot) }
    }

    /// Any artist's answer may have changed.
    public mutating func changedEverything() {
        everything &+= 1
    }

    private mutating func record(_ days: ClosedRange<Int64>, in slot: Int) {
        var changes = spans.removeValue(forKey: slot) ?? []
        if let same = changes.firstIndex(where: { $0.days == days }) {
            changes[same].version = version
        } else {
            changes.append(Span(days: days, version: version))
            if changes.count > Self.spansKept {
                changes.sort { $0.version < $1.version }
                let joined = Span(days: changes[0].days.joined(with: changes[1].days), version: changes[1].version)
                changes.replaceSubrange(0...1, with: [joined])
            }
        }
        spans[slot] = changes
    }

    /// The counter of `artist` among a family's: the same in every process (MurmurHash3 of its id), so that a set of
    /// them can travel between processes (`ArtistDays.announcement`).
    static func artistSlot(of artist: String) -> Int {
        Int(truncatingIfNeeded: MurmurHash3.hash64(artist)) & (slotCount - 1)
    }

    /// The counter of an artist's (`artistSlot`) among all: the family's counters, one after another.
    static func slot(_ artistSlot: Int, family: Int) -> Int {
        family * slotCount + artistSlot
    }
}

/// What a change touched: artists (as the counters of `ArtistVersions` they use), each with the span of UTC days
/// it touched.
public struct ArtistDays: Sendable, Equatable {
    fileprivate private(set) var spans: [Int: ClosedRange<Int64>] = [:]

    public init() {}

    /// `artists`, each on `days` in `families`.
    public init(_ artists: some Sequence<String>, _ families: ArtistVersions.Families, days: ClosedRange<Int64>) {
        for artist in artists { insert(artist, families, days: days) }
    }

    public var isEmpty: Bool { spans.isEmpty }

    /// `artist`'s events of `families` changed on `days` (as well as on the days already noted).
    public mutating func insert(_ artist: String, _ families: ArtistVersions.Families, days: ClosedRange<Int64>) {
        let artistSlot = ArtistVersions.artistSlot(of: artist)
        for family in families.indexes { insert(slot: ArtistVersions.slot(artistSlot, family: family), days: days) }
    }

    public mutating func formUnion(_ other: ArtistDays) {
        for (slot, days) in other.spans { insert(slot: slot, days: days) }
    }

    private mutating func insert(slot: Int, days: ClosedRange<Int64>) {
        spans[slot] = spans[slot].map { $0.joined(with: days) } ?? days
    }

    /// The set as text that fits a PostgreSQL notification: the counters of every family as bits (each word of 64 as
    /// 16 hexadecimal digits, 4,096 characters), then the first and last day of all the spans (days since the epoch),
    /// separated by spaces. Every artist read back from it changed on all those days.
    public var announcement: String {
        var words = [UInt64](repeating: 0, count: ArtistVersions.allSlots / 64)
        for slot in spans.keys { words[slot >> 6] |= 1 << UInt64(slot & 63) }
        let hex = words.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
        let first = spans.values.map(\.lowerBound).min() ?? 0, last = spans.values.map(\.upperBound).max() ?? 0
        return "\(hex) \(first) \(last)"
    }

    /// The set `announcement` wrote; nil for any other text.
    public init?(announcement: String) {
        let parts = announcement.split(separator: " ")
        guard parts.count == 3, let first = Int64(parts[1]), let last = Int64(parts[2]), first <= last else { return nil }
        let utf8 = Array(parts[0].utf8)
        guard utf8.count == ArtistVersions.allSlots / 4 else { return nil }
        for index in 0..<ArtistVersions.allSlots / 64 {
            guard var word = UInt64(String(decoding: utf8[index * 16..<(index + 1) * 16], as: UTF8.self), radix: 16) else { return nil }
            while word != 0 {
                spans[index << 6 | word.trailingZeroBitCount] = first...last
                word &= word - 1
            }
        }
    }
}

extension ClosedRange<Int64> {
    /// The smallest span holding both.
    func joined(with other: ClosedRange<Int64>) -> ClosedRange<Int64> {
        Swift.min(lowerBound, other.lowerBound)...Swift.max(upperBound, other.upperBound)
    }
}
