/// The rule a TZif file's footer gives for every instant after its last transition (RFC 8536 section 3.3, the
/// POSIX `TZ` form with the version 3 extensions): a standard offset and, optionally, a daylight-saving offset with
/// the two yearly dates and local times it starts and ends at. For example `PST8PDT,M3.2.0,M11.1.0` or
/// `<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45`.
struct PosixZoneRule: Sendable, Equatable {
    /// Seconds east of UTC in standard time.
    var standardOffset: Int32
    /// Daylight-saving time: its offset and when it starts and ends each year (nil: standard time all year).
    var daylight: Daylight?

    struct Daylight: Sendable, Equatable {
        /// Seconds east of UTC while daylight-saving time is on.
        var offset: Int32
        /// When it starts, in local standard time.
        var start: Change
        /// When it ends, in local daylight-saving time.
        var end: Change
    }

    /// A yearly change: a day of the year and a local time on it (seconds, -167 h to 167 h in version 3).
    struct Change: Sendable, Equatable {
        var day: Day
        var time: Int64
    }

    enum Day: Sendable, Equatable {
        /// `Jn`: day 1 to 365 of the year, February 29 never counted.
        case julianNoLeap(Int)
        /// `n`: day 0 to 365 of the year, February 29 counted.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 is Sunday) of week `w` (1 to 5, 5 the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    struct Malformed: Error, CustomStringConvertible {
        var text: String
        var description: String { "malformed POSIX TZ rule \"\(text)\"" }
    }

    /// Reads `text` (the footer without its newlines); throws `Malformed`.
    init(_ text: String) throws(Malformed) {
        var reader = Reader(bytes: Array(text.utf8))
        guard reader.name(), let standard = reader.duration(), (-24 * 3600...24 * 3600).contains(standard) else { throw Malformed(text: text) }
        standardOffset = Int32(-standard)
        if reader.atEnd {
            daylight = nil
            return
        }
        guard reader.name() else { throw Malformed(text: text) }
        var offset = standardOffset + 3600
        if !reader.atEnd, reader.peek != UInt8(ascii: ",") {
            guard let daylightOffset = reader.duration(), (-24 * 3600...24 * 3600).contains(daylightOffset) else { throw Malformed(text: text) }
            offset = Int32(-daylightOffset)
        }
        // A footer with a daylight-saving name always says when it applies (RFC 8536): no default rule is guessed.
        guard reader.take(","), let start = reader.change(), reader.take(","), let end = reader.change(), reader.atEnd else {
            throw Malformed(text: text)
        }
        daylight = Daylight(offset: offset, start: start, end: end)
    }

    /// Seconds east of UTC at `instant` (seconds since the epoch).
    func offset(at instant: Int64) -> Int32 {
        guard let daylight else { return standardOffset }
        // The year the instant falls in locally; a change never lies within a day of the new year's other side in any
        // zone, so the year of the standard local time picks the right pair of changes.
        let year = CivilDate(daysSinceEpoch: (instant + Int64(standardOffset)).floorDiv(86_400)).year
        let start = Self.localSeconds(of: daylight.start, in: year) - Int64(standardOffset)
        let end = Self.localSeconds(of: daylight.end, in: year) - Int64(daylight.offset)
        let inDaylight = start < end ? (start <= instant && instant < end) : !(end <= instant && instant < start)
        return inDaylight ? daylight.offset : standardOffset
    }

    /// The stretch of one offset around `instant`, starting no earlier than `start` (the zone's last transition).
    func span(at instant: Int64, after start: Int64) -> OffsetSpan {
        guard let daylight else { return OffsetSpan(offset: standardOffset, from: start, until: .max) }
        // The changes of the years around the instant's bracket it: those of its own year, and one on either side.
        let year = CivilDate(daysSinceEpoch: (instant + Int64(standardOffset)).floorDiv(86_400)).year
        var from = start
        var until = Int64.max
        for changeYear in year - 1...year + 1 {
            for change in [Self.localSeconds(of: daylight.start, in: changeYear) - Int64(standardOffset),
                           Self.localSeconds(of: daylight.end, in: changeYear) - Int64(daylight.offset)] {
                if change <= instant { from = max(from, change) } else { until = min(until, change) }
            }
        }
        return OffsetSpan(offset: offset(at: instant), from: from, until: until)
    }

    /// The local seconds since the epoch at which `change` happens in `year`.
    static func localSeconds(of change: Change, in year: Int) -> Int64 {
        let january1 = CivilDate(year: year, month: 1, day: 1).daysSinceEpoch
        let day: Int64
        switch change.day {
        case .julianNoLeap(let n):
            let leap = CivilDate.daysIn(month: 2, year: year) == 29
            day = january1 + Int64(n - 1) + (leap && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            day = january1 + Int64(n)
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilDate(year: year, month: month, day: 1).daysSinceEpoch
            let firstWeekday = CivilDate.weekday(ofDay: first)
            var candidate = first + (Int64(weekday) - firstWeekday).floorMod(7) + Int64(week - 1) * 7
            let length = Int64(CivilDate.daysIn(month: month, year: year))
            while candidate >= first + length { candidate -= 7 }
            day = candidate
        }
        return day * 86_400 + change.time
    }

    /// Reads the parts of a POSIX TZ string.
    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        var atEnd: Bool { position == bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[position] }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard peek == UInt8(character.value) else { return false }
            position += 1
            return true
        }

        /// A zone abbreviation: three or more letters, or anything but `>` between `<` and `>`.
        mutating func name() -> Bool {
            if take("<") {
                let start = position
                while let byte = peek, byte != UInt8(ascii: ">") { position += 1 }
                return position - start >= 1 && take(">")
            }
            let start = position
            // ASCII letters only: `| 0x20` makes an upper-case letter lower-case and nothing else a letter.
            while let byte = peek, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) {
                position += 1
            }
            return position - start >= 3
        }

        /// `[+-]hh[:mm[:ss]]` as seconds (hours up to 167).
        mutating func duration() -> Int64? {
            var sign: Int64 = 1
            if take("-") { sign = -1 } else { _ = take("+") }
            guard let hours = number(maxDigits: 3), hours <= 167 else { return nil }
            var seconds = hours * 3600
            if take(":") {
                guard let minutes = number(maxDigits: 2), minutes < 60 else { return nil }
                seconds += minutes * 60
                if take(":") {
                    guard let secs = number(maxDigits: 2), secs < 60 else { return nil }
                    seconds += secs
                }
            }
            return sign * seconds
        }

        /// `date[/time]`, the time 02:00:00 when not given.
        mutating func change() -> Change? {
            let day: Day
            if take("J") {
                guard let n = number(maxDigits: 3), (1...365).contains(n) else { return nil }
                day = .julianNoLeap(Int(n))
            } else if take("M") {
                guard let month = number(maxDigits: 2), (1...12).contains(month), take("."),
                      let week = number(maxDigits: 1), (1...5).contains(week), take("."),
                      let weekday = number(maxDigits: 1), weekday <= 6 else { return nil }
                day = .monthWeekDay(month: Int(month), week: Int(week), weekday: Int(weekday))
            } else {
                guard let n = number(maxDigits: 3), n <= 365 else { return nil }
                day = .zeroBased(Int(n))
            }
            var time: Int64 = 7200
            if take("/") {
                guard let given = duration() else { return nil }
                time = given
            }
            return Change(day: day, time: time)
        }

        mutating func number(maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var digits = 0
            while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < maxDigits {
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
                position += 1
            }
            return digits == 0 ? nil : value
        }
    }
}
