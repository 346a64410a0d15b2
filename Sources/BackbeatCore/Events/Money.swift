/// An exact decimal amount with six fractional digits, held as an integer count of millionths.
///
/// Event amounts fit in `Int64` (|amount| <= 1e12 is 1e18 millionths); sums use `Int128` so that no total can
/// overflow. No binary floating point is ever involved.
public struct Money: Hashable, Comparable, Sendable {
    /// The amount in millionths of the currency unit.
    public var micros: Int128

    public static let fractionDigits = 6
    public static let limitMicros: Int128 = 1_000_000_000_000 * 1_000_000
    public static let zero = Money(micros: 0)

    public init(micros: Int128) {
        self.micros = micros
    }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.micros < rhs.micros }
    public static func + (lhs: Money, rhs: Money) -> Money { Money(micros: lhs.micros + rhs.micros) }
    public static func += (lhs: inout Money, rhs: Money) { lhs.micros += rhs.micros }

    /// Why a text is not an acceptable amount.
    public enum ParseError: Error, Equatable, Sendable {
        case notADecimal
        case tooManyFractionDigits
        case outOfRange
    }

    /// The largest magnitude a stored total can have (numeric(38, 6)).
    public static let totalLimitMicros: Int128 = Int128("99999999999999999999999999999999999999")!

    /// Parses a plain decimal (`-12.5`, `3`, `0.000001`) or, when `allowExponent`, a JSON number with an
    /// exponent (`1.5e2`). At most six fractional digits after normalisation; |amount| <= 1e12.
    public static func parse(_ text: String, allowExponent: Bool, limit: Int128 = limitMicros) throws(ParseError) -> Money {
        var digits: [UInt8] = []
        var negative = false
        var fractionDigits = 0
        var exponent = 0
        var seenPoint = false
        var utf8 = Array(text.utf8)[...]
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
        }
        guard let first = utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { throw .notADecimal }
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digits.append(byte - UInt8(ascii: "0"))
                if seenPoint { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
                guard index + 1 < utf8.endIndex, utf8[index + 1] >= UInt8(ascii: "0"), utf8[index + 1] <= UInt8(ascii: "9") else {
                    throw .notADecimal
                }
            } else if (byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")), allowExponent {
                guard let parsed = Int(String(decoding: utf8[(index + 1)...], as: UTF8.self)), abs(parsed) < 100 else {
                    throw .notADecimal
                }
                exponent = parsed
                break
            } else {
                throw .notADecimal
            }
            index += 1
        }
        // Value = digits * 10^(exponent - fractionDigits); we need millionths: shift = exponent - fractionDigits + 6.
        // Digits as written count, trailing zeros included: "1.0000000" has seven.
        let shift = exponent - fractionDigits + Money.fractionDigits
        guard shift >= 0 else { throw .tooManyFractionDigits }
        var value: Int128 = 0
        for digit in digits {
            guard value <= (Int128.max - 9) / 10 else { throw .outOfRange }
            value = value * 10 + Int128(digit)
        }
        for _ in 0..<shift {
            guard value <= Int128.max / 10 else { throw .outOfRange }
            value *= 10
            if value > limit { throw .outOfRange }
        }
        guard value <= limit else { throw .outOfRange }
        return Money(micros: negative ? -value : value)
    }

    /// The exact decimal text with all six fractional digits, e.g. `-12.500000`.
    public var decimalString: String {
        let magnitude = micros.magnitude
        let whole = magnitude / 1_000_000
        let fraction = String(magnitude % 1_000_000)
        let padded = String(repeating: "0", count: 6 - fraction.count) + fraction
        return (micros < 0 ? "-" : "") + String(whole) + "." + padded
    }
}
