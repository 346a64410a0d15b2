/// How an artist's stored hours (or quarter hours) regroup into the periods of another zone (`tz=`): which stored
/// slots a read of the instants `[from, to)` covers, and the period on the other zone's clock each of them falls in.
///
/// An artist's numbers are stored on its own local clock (a fall-back hour holds both of its real hours): the
/// dashboard cubes by hour or day, the full-dimension tables by quarter hour (`Cube.Grain.quarterHour`). A stored slot
/// answers the other zone exactly when all of its instants fall in one of that zone's periods. By hours: for days,
/// weeks and months, whenever the two zones' offsets differ by whole hours around the other zone's midnights; for
/// hours, whenever they differ by whole hours throughout and no merged fall-back hour of the artist is two hours of
/// the other zone. By quarter hours, which every offset in use is a multiple of: any zone's days, weeks and months,
/// and its hours but across a change of either clock that merges two of them. Anything else is refused, never cut
/// (`zone_not_tiled`).
public struct ZoneRegrouping: Sendable {
    /// The stored slots to read, on the artist's clock (whole slots, half-open).
    public let stored: QueryInterval
    /// The length of a stored slot: 3600 (hours) or 900 (quarter hours, which only the full-dimension tables keep).
    public let slotSeconds: Int64
    /// The interval on the reading zone's clock, the one its periods are labelled on.
    public let reading: QueryInterval
    public let readingZone: ZoneRules
    public let granularity: Granularity
    /// The reading zone's period (its local start) of each stored slot from `stored.from` on, nil for a slot outside
    /// `[from, to)` or one that never happened.
    private let periods: [Timestamp?]
    /// The period of each stored day read, when every period is made of whole stored days (unique listeners are kept
    /// per stored day, so only then can they answer it); nil otherwise.
    public let periodOfStoredDay: [Int64: Timestamp]?

    /// The regrouping of the instants `[from, to)` (seconds since the epoch) of an artist stored in `storedZone`,
    /// read in `readingZone` by `granularity`, from stored slots of `slotSeconds` (3600 or 900). Throws
    /// `zone_not_tiled` naming the first stored slot that would be cut.
    public init(
        storedIn storedZone: ZoneRules, readIn readingZone: ZoneRules, from: Int64, to: Int64, granularity: Granularity, slotSeconds: Int64 = 3600
    ) throws(QueryError) {
        precondition(from < to && (slotSeconds == 3600 || slotSeconds == 900))
        self.slotSeconds = slotSeconds
        self.readingZone = readingZone
        self.granularity = granularity
        reading = QueryInterval(from: Timestamp(seconds: readingZone.local(atSecond: from)), to: Timestamp(seconds: readingZone.local(atSecond: to)))

        // Every stored slot holding an instant of the interval lies between the least and the greatest local time of it.
        var least = Int64.max, greatest = Int64.min
        Self.forEachSpan(of: storedZone, from: from, to: to) { piece, offset in
            least = min(least, piece.lowerBound + offset)
            greatest = max(greatest, piece.upperBound - 1 + offset)
        }
        let firstSlot = least.floorDiv(slotSeconds), lastSlot = greatest.floorDiv(slotSeconds)
        var periods: [Timestamp?] = []
        periods.reserveCapacity(Int(lastSlot - firstSlot + 1))
        var dayPeriods: [Int64: Timestamp?] = [:]
        for slot in firstSlot...lastSlot {
            let pieces = Self.instants(ofLocalSlot: slot, seconds: slotSeconds, in: storedZone)
            let inside = pieces.filter { $0.lowerBound < to && $0.upperBound > from }
            guard !inside.isEmpty else {
                periods.append(nil)
                continue
            }
            if inside.contains(where: { $0.lowerBound < from || $0.upperBound > to }) {
                throw Self.notTiled(slot: slot, slotSeconds, storedZone, readingZone, cut: inside[0].lowerBound < from ? "the start" : "the end", of: "the interval")
            }
            var period: Timestamp?
            for piece in inside {
                let single = Self.period(of: piece, in: readingZone, granularity, whole: reading.from)
                guard let single, period == nil || period == single else {
                    throw Self.notTiled(slot: slot, slotSeconds, storedZone, readingZone, cut: "a \(granularity.rawValue)", of: readingZone.name)
                }
                period = single
            }
            periods.append(period)
            let day = slot.floorDiv(86_400 / slotSeconds)
            if let known = dayPeriods[day], known != period { dayPeriods[day] = .some(nil) } else { dayPeriods[day] = .some(period) }
        }
        let firstInside = periods.firstIndex { $0 != nil }!, lastInside = periods.lastIndex { $0 != nil }!
        self.periods = Array(periods[firstInside...lastInside])
        stored = QueryInterval(
            from: Timestamp(seconds: (firstSlot + Int64(firstInside)) * slotSeconds), to: Timestamp(seconds: (firstSlot + Int64(lastInside) + 1) * slotSeconds))
        let wholeDays = dayPeriods.keys.allSatisfy { storedZone.startOfLocalDay($0) >= from && storedZone.startOfLocalDay($0 + 1) <= to }
        if granularity != .hour, wholeDays, dayPeriods.values.allSatisfy({ $0 != nil }) {
            periodOfStoredDay = dayPeriods.mapValues { $0! }
        } else {
            periodOfStoredDay = nil
        }
    }

    /// The regrouping a read in another zone takes: by stored hours where they tile the reading zone's periods (every
    /// cube keeps hours), else by stored quarter hours, which the full-dimension tables keep from the local day
    /// `quarterHoursFrom` on (`Store.quarterHourDetailFrom`; for `--detail-days`, which the read itself checks).
    /// Throws `zone_not_tiled` naming the first slot cut, and where quarter hours begin when they would have answered.
    public static func choosing(
        storedIn storedZone: ZoneRules, readIn readingZone: ZoneRules, from: Int64, to: Int64, granularity: Granularity,
        quarterHoursFrom: Int64
    ) throws(QueryError) -> ZoneRegrouping {
        let byHours: QueryError
        do {
            return try ZoneRegrouping(storedIn: storedZone, readIn: readingZone, from: from, to: to, granularity: granularity)
        } catch {
            byHours = error
        }
        guard byHours.code == .zoneNotTiled else { throw byHours }
        let byQuarters = try ZoneRegrouping(storedIn: storedZone, readIn: readingZone, from: from, to: to, granularity: granularity, slotSeconds: 900)
        guard byQuarters.stored.from.seconds.floorDiv(86_400) >= quarterHoursFrom else {
            // A day PostgreSQL can store (beyond it: none are kept).
            let kept = quarterHoursFrom < 2_000_000
                ? "kept from the artist's local day \(RFC3339.formatDate(CivilDate(daysSinceEpoch: quarterHoursFrom))) on (counted by hours before)" : "not kept"
            throw QueryError(.zoneNotTiled, "\(byHours.message); the quarter hours that tile every zone are \(kept)")
        }
        return byQuarters
    }

    /// The reading zone's period of the stored slot starting at `start` (the artist's local clock), nil outside.
    public func period(ofStoredSlot start: Timestamp) -> Timestamp? {
        let index = (start.seconds - stored.from.seconds).floorDiv(slotSeconds)
        return periods.indices.contains(Int(index)) ? periods[Int(index)] : nil
    }

    /// The granularity of the rows `regroup` takes: the stored slots'.
    public var slotGranularity: Granularity { slotSeconds == 900 ? .quarterHour : .hour }

    /// Rows by stored slot (`slotGranularity`) summed into the reading zone's periods (rows outside the interval
    /// dropped).
    public func regroup(_ rows: [QueryRow]) -> [QueryRow] {
        var sums: [QueryRow] = []
        var place: [RegroupedKey: Int] = [:]
        for row in rows {
            guard let start = row.periodStart, let period = period(ofStoredSlot: start) else { continue }
            let key = RegroupedKey(period: period, groupValues: row.groupValues)
            if let index = place[key] {
                for metric in row.metrics.indices { sums[index].metrics[metric] = sums[index].metrics[metric].adding(row.metrics[metric]) }
            } else {
                place[key] = sums.count
                sums.append(QueryRow(periodStart: granularity == .all ? nil : period, groupValues: row.groupValues, metrics: row.metrics))
            }
        }
        return sums
    }

    private struct RegroupedKey: Hashable {
        var period: Timestamp
        var groupValues: [String]
    }

    // MARK: - Zones

    /// The instants (seconds since the epoch) whose local time in `zone` falls in local slot `slot` (slots of
    /// `seconds` since the local epoch): one stretch, two where the clock went back over it, none where it went
    /// forward over it.
    static func instants(ofLocalSlot slot: Int64, seconds: Int64, in zone: ZoneRules) -> [Range<Int64>] {
        let start = slot * seconds
        // Offsets lie within -26 h and +26 h: the stretches of offsets around the slot are the candidates.
        var pieces: [Range<Int64>] = []
        forEachSpan(of: zone, from: start - 26 * 3600, to: start + seconds + 26 * 3600) { span, offset in
            let lower = max(start - offset, span.lowerBound), upper = min(start + seconds - offset, span.upperBound)
            guard lower < upper else { return }
            if let last = pieces.last, last.upperBound == lower {
                pieces[pieces.count - 1] = last.lowerBound..<upper
            } else {
                pieces.append(lower..<upper)
            }
        }
        return pieces
    }

    /// Calls `body` with each stretch of one offset of `zone` within `[from, to)` and its offset, in order.
    static func forEachSpan(of zone: ZoneRules, from: Int64, to: Int64, _ body: (Range<Int64>, Int64) -> Void) {
        var at = from
        while at < to {
            let span = zone.span(atSecond: at)
            let until = min(span.until, to)
            body(at..<until, Int64(span.offset))
            at = until
        }
    }

    /// The one period of `zone` by `granularity` that every instant of `piece` falls in (its local start), nil when
    /// they fall in more than one. Every instant is in the one period of `all`, which starts at `whole`.
    static func period(of piece: Range<Int64>, in zone: ZoneRules, _ granularity: Granularity, whole: Timestamp) -> Timestamp? {
        guard granularity != .all else { return whole }
        var period: Timestamp?
        var single = true
        forEachSpan(of: zone, from: piece.lowerBound, to: piece.upperBound) { span, offset in
            // Within one offset the local clock only moves forward: the first and last instants' periods bound the rest.
            let first = granularity.periodStart(of: Timestamp(seconds: span.lowerBound + offset))
            let last = granularity.periodStart(of: Timestamp(seconds: span.upperBound - 1 + offset))
            if first != last || (period != nil && period != first) { single = false }
            period = first
        }
        return single ? period : nil
    }

    private static func notTiled(slot: Int64, _ seconds: Int64, _ stored: ZoneRules, _ reading: ZoneRules, cut: String, of what: String) -> QueryError {
        let local = Timestamp(seconds: slot * seconds)
        let text = RFC3339.format(local: local, offset: stored.offset(atLocalSecond: local.seconds))
        let slots = seconds == 900 ? "quarter hours" : "hours"
        let rule = seconds == 900
            ? "by quarter hours, any zone can be read but across a change of either's clock that merges two of its periods"
            : "\(reading.name) can be read where its offset differs from \(stored.name)'s by whole hours (and, by hour, not across a change of either's clock)"
        return QueryError(.zoneNotTiled, "the artist's numbers are read by the \(slots) of its zone \(stored.name), and its \(seconds == 900 ? "quarter hour" : "hour") from \(text) would be cut by \(cut) of \(what): \(rule)")
    }
}
