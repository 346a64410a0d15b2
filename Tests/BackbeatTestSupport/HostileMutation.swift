import BackbeatCore
import Foundation

/// Ways a valid event's bytes turn hostile, shared by the property-based test (in process) and the end-to-end
/// hostile stream test (through a live service).
public enum HostileMutation: CaseIterable, Sendable {
    case truncate, flipByte, insertGarbage, invalidUTF8, duplicateField, wrongType, hugeNumber, hugeString,
         deepNesting, nullPayload, emptyPayload, dropField, replaceWithScalar, controlCharacter

    /// `bytes` turned hostile by this mutation; `position` picks where and how much.
    public func apply(to bytes: [UInt8], at position: Int) -> [UInt8]? {
        var bytes = bytes
        let index = bytes.isEmpty ? 0 : position % bytes.count
        let text = String(decoding: bytes, as: UTF8.self)
        switch self {
        case .truncate:
            return Array(bytes.prefix(index))
        case .flipByte:
            guard !bytes.isEmpty else { return bytes }
            bytes[index] ^= UInt8(truncatingIfNeeded: 1 << (position % 8))
            return bytes
        case .insertGarbage:
            let garbage = (0..<(1 + position % 16)).map { UInt8(truncatingIfNeeded: ($0 &* 37) &+ position) }
            bytes.insert(contentsOf: garbage, at: index)
            return bytes
        case .invalidUTF8:
            let sequences: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]]
            bytes.insert(contentsOf: sequences[position % sequences.count], at: index)
            return bytes
        case .duplicateField:
            return Array(text.replacingFirst("{", with: #"{"artist_id":"dup","#).utf8)
        case .wrongType:
            let replacements = [#""artist_id":7"#, #""artist_id":null"#, #""artist_id":["a"]"#, #""occurred_at":12"#, #""type":{}"#]
            let chosen = replacements[position % replacements.count]
            let field = String(chosen.prefix { $0 != ":" })
            return Array(text.replacingField(field, with: chosen).utf8)
        case .hugeNumber:
            let numbers = ["1e400", "-1e400", String(repeating: "9", count: 400), "1" + String(repeating: "0", count: 30), "0.0000000000000000000001"]
            return Array(text.replacingFirst("{", with: #"{"count":\#(numbers[position % numbers.count]),"amount":\#(numbers[(position + 1) % numbers.count]),"#).utf8)
        case .hugeString:
            return Array(text.replacingFirst("{", with: #"{"note":""# + String(repeating: "x", count: 1_000 + position % 80_000) + #"","#).utf8)
        case .deepNesting:
            let depth = 10 + position % 5_000
            return Array(text.replacingFirst("{", with: #"{"nested":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + ",").utf8)
        case .nullPayload:
            return nil
        case .emptyPayload:
            return []
        case .dropField:
            let fields = ["event_id", "type", "occurred_at", "artist_id"]
            return Array(text.replacingField(fields[position % fields.count], with: #""ignored":0"#).utf8)
        case .replaceWithScalar:
            let scalars = ["null", "true", "42", #""text""#, "[]", "{}", ""]
            return Array(scalars[position % scalars.count].utf8)
        case .controlCharacter:
            return Array(text.replacingFirst(#"":""#, with: "\":\"\u{01}").utf8)
        }
    }
}

extension String {
    /// Replaces `"field":value` (up to the next comma or closing brace) with `replacement`.
    func replacingField(_ field: String, with replacement: String) -> String {
        guard let start = range(of: "\"\(field)\":") else { return self }
        var end = start.upperBound
        var inString = false
        while end < endIndex {
            let character = self[end]
            if character == "\"" { inString.toggle() }
            if !inString && (character == "," || character == "}") { break }
            end = index(after: end)
        }
        return replacingCharacters(in: start.lowerBound..<end, with: replacement)
    }

    /// This text with the first occurrence of `target` replaced.
    public func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
