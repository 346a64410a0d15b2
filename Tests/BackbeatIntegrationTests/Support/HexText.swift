import BackbeatStore

// PostgreSQL's text form of `hll` and `bytea` values, which the tests read back by hand.
extension Store {
    /// The bytes of PostgreSQL's hex text output (`\x` then two hex digits per byte), or nil if it is not that.
    static func bytes(fromHexText text: String) -> [UInt8]? {
        let hex = Array(text.utf8.dropFirst(2))
        guard text.hasPrefix("\\x"), hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = 0
        while index < hex.count {
            guard let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
