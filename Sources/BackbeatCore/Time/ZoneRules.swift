/// One IANA time zone's offsets from UTC through time, read from its compiled TZif file (RFC 8536, versions 1 to 4):
/// the transitions the file lists, then the rule of its footer for every instant after the last of them. The bytes
/// come from the zone database the service and PostgreSQL share (docs/api.md says which); reading them is the
/// caller's.
///
/// A local day is the set of instants whose local date is that day: usually 24 hours, 23 or 25 at a daylight-saving
/// change, and starting at 01:00 where a change skips midnight.
public struct ZoneRules: Sendable, Equatable {
    public let name: String
    /// Seconds since the epoch at which the offset changes, ascending.
    let transitions: [Int64]
    /// The offset (seconds east of UTC) from each transition on.
    let offsetsAfter: [Int32]
    /// The offset before the first transition (the file's first time type).
    let initialOffset: Int32
    /// The rule after the last transition (nil: the last offset stays).
    let footer: PosixZoneRule?

    public static let utc = ZoneRules(name: "UTC", transitions: [], offsetsAfter: [], initialOffset: 0, footer: nil)

    init(name: String, transitions: [Int64], offsetsAfter: [Int32], initialOffset: Int32, footer: PosixZoneRule?) {
        self.name = name
        self.transitions = transitions
        self.offsetsAfter = offsetsAfter
        self.initialOffset = initialOffset
        self.footer = footer
    }

    /// Why a file is not a zone this service can use.
    public struct Unreadable: Error, CustomStringConvertible {
        public var name: String
        public var reason: String
        public var description: String { "time zone \"\(name)\": \(reason)" }
    }

    /// The zone `name` as `tzif` (the file's bytes) describes it; throws `Unreadable` for anything that is not a
    /// TZif file, and for the zones that count leap seconds (the database's `right/` zones), which no clock here uses.
    public init(name: String, tzif bytes: [UInt8]) throws(Unreadable) {
        func unreadable(_ reason: String) -> Unreadable { Unreadable(name: name, reason: reason) }
        var reader = TZifReader(bytes: bytes)
        guard let first = reader.header() else { throw unreadable("not a TZif file") }
        var header = first
        var timeSize = 4
        if first.version >= 2 {
            // Version 2 and later repeat the data with 64-bit times after the version 1 block: that one is read.
            guard reader.skip(first.dataBytes(timeSize: 4)), let second = reader.header() else { throw unreadable("truncated TZif file") }
            header = second
            timeSize = 8
        }
        guard header.leapCount == 0 else { throw unreadable("counts leap seconds") }
        guard header.typeCount > 0, let times = reader.times(header.timeCount, size: timeSize),
              let typeIndexes = reader.bytes(header.timeCount), let types = reader.types(header.typeCount)
        else { throw unreadable("truncated TZif file") }
        guard typeIndexes.allSatisfy({ Int($0) < types.count }), zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw unreadable("inconsistent TZif file")
        }
        guard reader.skip(header.characterCount + header.standardCount + header.utcCount) else { throw unreadable("truncated TZif file") }
        var footer: PosixZoneRule?
        if first.version >= 2 {
            guard let text = reader.footer() else { throw unreadable("TZif footer missing") }
            if !text.isEmpty {
                do { footer = try PosixZoneRule(text) } catch { throw unreadable(error.description) }
            }
        }
        self.init(name: name, transitions: times, offsetsAfter: typeIndexes.map { types[Int($0)] }, initialOffset: types[0], footer: footer)
    }

    /// This zone, or nil when it is UTC (whose clock needs no converting).
    public var outsideUTC: ZoneRules? {
        name == Self.utc.name ? nil : self
    }

    /// `instant` (seconds since the epoch) on this zone's clock: seconds since the local epoch.
    public func local(atSecond instant: Int64) -> Int64 {
        instant + Int64(offset(atSecond: instant))
    }

    /// Seconds east of UTC at `instant` (seconds since the epoch).
    public func offset(atSecond instant: Int64) -> Int32 {
        if let last = transitions.last, instant >= last, let footer { return footer.offset(at: instant) }
        let passed = transitionsPassed(atSecond: instant)
        return passed == 0 ? initialOffset : offsetsAfter[passed - 1]
    }

    /// How many of the transitions lie at or before `instant` (a binary search).
    private func transitionsPassed(atSecond instant: Int64) -> Int {
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle] <= instant { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// A stretch of time with one offset: the offset at `instant` and the instants it holds from and until, as far as
    /// the rules say (a stretch may end where the next has the same offset).
    public func span(atSecond instant: Int64) -> OffsetSpan {
        if let last = transitions.last, instant >= last, let footer { return footer.span(at: instant, after: last) }
        let passed = transitionsPassed(atSecond: instant)
        return OffsetSpan(
            offset: passed == 0 ? initialOffset : offsetsAfter[passed - 1],
            from: passed == 0 ? .min : transitions[passed - 1], until: passed == transitions.count ? .max : transitions[passed])
    }

    /// The offset of local wall-clock time `local` (seconds since the local 1970-01-01 00:00): the one that makes it an
    /// instant. Where the clock went back and `local` happened twice, the earlier's (the offset before the change);
    /// where it went forward over `local`, which never happened, the offset before the change too.
    public func offset(atLocalSecond local: Int64) -> Int32 {
        // Offsets change at most once within a day here, and lie within 26 h: the offsets a day either side are the
        // candidates.
        let before = offset(atSecond: local - 86_400)
        let after = offset(atSecond: local + 86_400)
        let earlier = max(before, after)
        if offset(atSecond: local - Int64(earlier)) == earlier { return earlier }
        let later = min(before, after)
        if offset(atSecond: local - Int64(later)) == later { return later }
        return before
    }

    /// The local day (days since 1970-01-01 of the local calendar) `instant` (seconds since the epoch) falls on.
    public func localDay(ofSecond instant: Int64) -> Int64 {
        (instant + Int64(offset(atSecond: instant))).floorDiv(86_400)
    }

    /// The first instant (seconds since the epoch) of local day `day`: the one whose local day is `day` or later while
    /// the second before's is earlier. A day skipped (Samoa's 2011-12-30) starts where the next one does. Where a change
    /// to an earlier offset crosses back over midnight (none in force today), the day before returns for a while after
    /// its end, and the day's start found may be the later of the two crossings.
    public func startOfLocalDay(_ day: Int64) -> Int64 {
        // Offsets lie within -26 h and +26 h: the day starts inside this window; the search finds the first instant
        // of it on or after `day`, to the second.
        var low = day * 86_400 - 26 * 3600
        var high = day * 86_400 + 26 * 3600
        while low < high {
            let middle = low + (high - low) / 2
            if localDay(ofSecond: middle) >= day { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// Seconds east of UTC from `from` (inclusive) until `until` (exclusive), seconds since the epoch.
public struct OffsetSpan: Sendable, Equatable {
    public var offset: Int32
    public var from: Int64
    public var until: Int64

    public func contains(_ instant: Int64) -> Bool { from <= instant && instant < until }
}
