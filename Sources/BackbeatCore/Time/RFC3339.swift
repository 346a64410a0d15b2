/// Parsing and formatting of RFC 3339 timestamps and `YYYY-MM-DD` dates.
public enum RFC3339 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`; `T` and `Z` may be lower case.
    /// Fractions beyond microseconds are truncated. Returns nil when the text is not such a timestamp.
    public static func parseTimestamp(_ text: String) -> Timestamp? {
        var text = text
        return text.withUTF8 { parseTimestamp(UnsafeRawBufferPointer($0)) }
    }

    static func parseTimestamp(_ b: UnsafeRawBufferPointer) -> Timestamp? {
        guard b.count >= 20,
              let date = parseDate(UnsafeRawBufferPointer(rebasing: b[0..<10])),
              b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              let hour = twoDigits(b, 11), b[13] == UInt8(ascii: ":"),
              let minute = twoDigits(b, 14), b[16] == UInt8(ascii: ":"),
              let second = twoDigits(b, 17),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var micros: Int64 = 0
        if b[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < b.count, let digit = digitValue(b[index]) {
                if digits < 6 { micros = micros * 10 + Int64(digit) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 6)..<6 { micros *= 10 }
        }
        guard index < b.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == b.count,
                  let offsetHour = twoDigits(b, index + 1), b[index + 3] == UInt8(ascii: ":"),
                  let offsetMinute = twoDigits(b, index + 4),
                  offsetHour < 24, offsetMinute < 60
            else { return nil }
            let sign: Int64 = b[index] == UInt8(ascii: "-") ? -1 : 1
            offsetSeconds = sign * Int64(offsetHour * 3600 + offsetMinute * 60)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let seconds = date.daysSinceEpoch * 86_400 + Int64(hour * 3600 + minute * 60 + second) - offsetSeconds
        return Timestamp(microseconds: seconds * 1_000_000 + micros)
    }

    /// Parses `YYYY-MM-DD`.
    public static func parseDate(_ text: String) -> CivilDate? {
        var text = text
        return text.withUTF8 { $0.count == 10 ? parseDate(UnsafeRawBufferPointer($0)) : nil }
    }

    static func parseDate(_ b: UnsafeRawBufferPointer) -> CivilDate? {
        guard b.count == 10,
              let c = twoDigits(b, 0), let y = twoDigits(b, 2), b[4] == UInt8(ascii: "-"),
              let month = twoDigits(b, 5), b[7] == UInt8(ascii: "-"),
              let day = twoDigits(b, 8)
        else { return nil }
        let date = CivilDate(year: c * 100 + y, month: month, day: day)
        return date.isValid ? date : nil
    }

    /// Parses either an RFC 3339 timestamp or a `YYYY-MM-DD` date (UTC midnight).
    public static func parseInstant(_ text: String) -> Timestamp? {
        if text.utf8.count == 10, let date = parseDate(text) {
            return Timestamp(seconds: date.daysSinceEpoch * 86_400)
        }
        return parseTimestamp(text)
    }

    /// Formats as `YYYY-MM-DDTHH:MM:SSZ`, adding `.ffffff` only when there are microseconds.
    public static func format(_ timestamp: Timestamp) -> String {
        let seconds = timestamp.seconds
        let micros = Int(timestamp.microseconds - seconds * 1_000_000)
        let days = seconds.floorDiv(86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let date = CivilDate(daysSinceEpoch: days)
        guard (0...9999).contains(date.year) else {
            var text = formatDate(date)
            text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
            if micros != 0 { text += "." + pad(micros, 6) }
            return text + "Z"
        }
        // Written digit by digit into the string's own storage: answers format one per period.
        return String(unsafeUninitializedCapacity: micros == 0 ? 20 : 27) { bytes in
            var at = writeDate(date, into: bytes)
            bytes[at] = UInt8(ascii: "T")
            at = writeDigits(secondOfDay / 3600, 2, into: bytes, at: at + 1)
            bytes[at] = UInt8(ascii: ":")
            at = writeDigits(secondOfDay / 60 % 60, 2, into: bytes, at: at + 1)
            bytes[at] = UInt8(ascii: ":")
            at = writeDigits(secondOfDay % 60, 2, into: bytes, at: at + 1)
            if micros != 0 {
                bytes[at] = UInt8(ascii: ".")
                at = writeDigits(micros, 6, into: bytes, at: at + 1)
            }
            bytes[at] = UInt8(ascii: "Z")
            return at + 1
        }
    }

    /// Formats local wall-clock time `local` (written as if it were UTC) with its offset `offset` (seconds east of
    /// UTC, whole minutes): `YYYY-MM-DDTHH:MM:SS+hh:mm`, the instant `local - offset`; a zero offset as `Z`.
    public static func format(local: Timestamp, offset: Int32) -> String {
        let utc = format(local)
        guard offset != 0 else { return utc }
        let minutes = Int(abs(offset)) / 60
        return utc.dropLast() + (offset < 0 ? "-" : "+") + pad(minutes / 60, 2) + ":" + pad(minutes % 60, 2)
    }

    /// Formats the start of a period on `zone`'s clock (`local`, written as if UTC) with the offset in force then; in
    /// UTC (`zone` nil) as UTC.
    public static func format(periodStart local: Timestamp, in zone: ZoneRules?) -> String {
        zone.map { format(local: local, offset: $0.offset(atLocalSecond: local.seconds)) } ?? format(local)
    }

    /// Formats as `YYYY-MM-DD`.
    public static func formatDate(_ date: CivilDate) -> String {
        guard (0...9999).contains(date.year) else { return pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) }
        return String(unsafeUninitializedCapacity: 10) { writeDate(date, into: $0) }
    }

    /// Writes `YYYY-MM-DD` (a year of 0-9999) at the start of `bytes`; answers the bytes written.
    private static func writeDate(_ date: CivilDate, into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var at = writeDigits(date.year, 4, into: bytes, at: 0)
        bytes[at] = UInt8(ascii: "-")
        at = writeDigits(date.month, 2, into: bytes, at: at + 1)
        bytes[at] = UInt8(ascii: "-")
        return writeDigits(date.day, 2, into: bytes, at: at + 1)
    }

    /// Writes the `width` last decimal digits of `value` (not negative) at `at`; answers where they end.
    private static func writeDigits(_ value: Int, _ width: Int, into bytes: UnsafeMutableBufferPointer<UInt8>, at: Int) -> Int {
        var rest = value
        for index in stride(from: at + width - 1, through: at, by: -1) {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return at + width
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func twoDigits(_ b: UnsafeRawBufferPointer, _ at: Int) -> Int? {
        guard at + 1 < b.count, let high = digitValue(b[at]), let low = digitValue(b[at + 1]) else { return nil }
        return high * 10 + low
    }
}
