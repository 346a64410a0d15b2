/// What a request's `Accept-Encoding` fields accept (RFC 9110, section 12.5.3): a list of content codings, each with
/// an optional weight (`;q=`), where a weight of 0 refuses the coding and `*` stands for every coding not named.
/// Codings are compared without regard to case. A field that cannot be read accepts nothing but the identity.
enum AcceptEncoding {
    /// Whether `fields` (every `Accept-Encoding` field of a request, in order) accept `coding`.
    static func accepts(_ coding: String, in fields: [String]) -> Bool {
        var named: Bool?
        var anyOther: Bool?
        for element in fields.lazy.flatMap({ $0.split(separator: ",") }) {
            let parts = element.split(separator: ";")
            guard let name = parts.first?.trimmed.lowercased(), !name.isEmpty else { continue }
            var weighted = true
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmed.lowercased() == "q" else { continue }
                weighted = Self.weight(pair[1].trimmed).map { $0 > 0 } ?? false
            }
            if name == coding.lowercased() {
                named = weighted
            } else if name == "*" {
                anyOther = weighted
            }
        }
        return named ?? anyOther ?? false
    }

    /// A weight as the grammar writes it ("0" to "1" with at most three decimals); nil when it is not one.
    private static func weight(_ text: Substring) -> Double? {
        guard text.count <= 5, let first = text.first, first == "0" || first == "1",
              text.dropFirst().isEmpty || text.dropFirst().first == ".",
              text.dropFirst(2).allSatisfy(\.isASCIIDigit), let value = Double(text), value <= 1 else { return nil }
        return value
    }
}

extension Substring {
    fileprivate var trimmed: Substring {
        let spaces: Set<Character> = [" ", "\t"]
        guard let start = firstIndex(where: { !spaces.contains($0) }), let end = lastIndex(where: { !spaces.contains($0) }) else { return "" }
        return self[start...end]
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
