import BackbeatCore
import Testing

/// The scanner reads strings eight bytes at a time where it can: every byte value, at every offset of a string
/// (so in every lane of a word and in the tail), is judged as the byte-by-byte rules judge it.
struct JSONScannerTests {
    @Test func everyByteAtEveryOffsetOfAStringIsJudgedByItself() throws {
        let plain = Array("abcdefghijklmnopqrstuvwxyz0123".utf8)
        for offset in plain.indices {
            for byte in UInt8.min...UInt8.max {
                var text = plain
                text[offset] = byte
                let document = Array(#"{"k":""#.utf8) + text + Array(#"","z":1}"#.utf8)
                let result = document.withUnsafeBytes { bytes in Result { () throws(JSONScanError) in try JSONScanner.scanObject(bytes) } }
                switch byte {
                case 0x20..<0x80 where byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\"):
                    let members = try result.get()
                    #expect(members.count == 2)
                    #expect(members[0].value == 6..<(6 + text.count), "byte \(byte) at \(offset)")
                    #expect(members[0].valueIsPlainASCII && !members[0].valueHasEscapes)
                default:
                    // A quote ends the string early, a lone backslash escapes the next letter (invalid here but for
                    // the few valid escapes), a control byte is invalid, a byte >= 0x80 alone is not UTF-8.
                    let validEscape = byte == UInt8(ascii: "\\") && offset + 1 < text.count
                        && [UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t")].contains(text[offset + 1])
                    if validEscape {
                        #expect(try result.get()[0].valueHasEscapes)
                    } else if case .success(let members) = result {
                        Issue.record("byte \(byte) at \(offset) was accepted: \(members)")
                    }
                }
            }
        }
    }

    @Test func multiByteCharactersAnywhereAreReadAsUTF8() throws {
        for offset in 0..<20 {
            let text = String(repeating: "a", count: offset) + "é€😀" + String(repeating: "b", count: 20 - offset)
            let document = Array(#"{"k":""#.utf8) + Array(text.utf8) + Array(#""}"#.utf8)
            let members = try document.withUnsafeBytes { try JSONScanner.scanObject($0) }
            #expect(members.count == 1 && !members[0].valueIsPlainASCII)
            let value = document.withUnsafeBytes { JSONScanner.string(members[0].value, hasEscapes: false, in: $0) }
            #expect(value == text)
        }
    }
}
