/// Standard base64 (RFC 4648, with padding), for archived keys and values that are not valid UTF-8.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Appends the encoding of `bytes` to `output`.
    static func encode(_ bytes: some Collection<UInt8>, into output: inout [UInt8]) {
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = b == nil ? nil : iterator.next()
            let word = UInt32(a) << 16 | UInt32(b ?? 0) << 8 | UInt32(c ?? 0)
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            output.append(b == nil ? UInt8(ascii: "=") : alphabet[Int(word >> 6 & 63)])
            output.append(c == nil ? UInt8(ascii: "=") : alphabet[Int(word & 63)])
        }
    }

    /// The bytes `text` encodes, or nil when it is not padded base64.
    static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            var word: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let byte = text[index + offset]
                if byte == UInt8(ascii: "=") && offset >= 2 && index + 4 == text.count {
                    padding += 1
                    word <<= 6
                    continue
                }
                let value = values[Int(byte)]
                guard value != 0xFF, padding == 0 else { return nil }
                word = word << 6 | UInt32(value)
            }
            output.append(UInt8(word >> 16 & 0xFF))
            if padding < 2 { output.append(UInt8(word >> 8 & 0xFF)) }
            if padding < 1 { output.append(UInt8(word & 0xFF)) }
            index += 4
        }
        return output
    }
}
