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
        let micros = timestamp.microseconds - seconds * 1_000_000
        let days = seconds.floorDiv(86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let date = CivilDate(daysSinceEpoch: days)
        var text = formatDate(date)
        text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if micros != 0 { text += "." + pad(Int(micros), 6) }
        return text + "Z"
    }

    /// Formats as `YYYY-MM-DD`.
    public static func formatDate(_ date: CivilDate) -> String {
        pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2)
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
