@testable import BackbeatServer
import Testing

/// `Accept-Encoding` as RFC 9110 reads it: named codings, weights, `*`, case, several fields.
@Suite struct AcceptEncodingTests {
    @Test(arguments: [
        (["zstd"], true),
        (["gzip, deflate, br, zstd"], true),  // what Chromium sends over HTTPS
        (["ZSTD"], true),
        (["gzip", "zstd;q=0.5"], true),  // two fields
        ([" gzip ,\tzstd ; q=1 "], true),
        (["zstd;q=0"], false),
        (["zstd;q=0.000"], false),
        (["zstd; Q=0"], false),
        (["gzip, deflate, br"], false),
        ([], false),
        (["*"], true),
        (["*;q=0"], false),
        (["zstd;q=0, *"], false),  // named refused: `*` does not bring it back
        (["*, zstd;q=0"], false),
        (["gzip;q=1, *;q=0.1"], true),
        (["zstd;q=2"], false),  // not a weight: not accepted
        (["zstd;q=abc"], false),
        (["zstd;q=0.1234"], false),
        (["xzstd, zstdx"], false),
        ([",,;,="], false),
    ] as [([String], Bool)])
    func zstdIsAcceptedAsTheFieldsSay(fields: [String], accepted: Bool) {
        #expect(AcceptEncoding.accepts("zstd", in: fields) == accepted, "\(fields)")
    }

    /// The byte reading says what a reading by strings says (the one it replaced, kept here as the model) of fields
    /// made at random of the pieces that matter.
    @Test func bytesReadAsTheStringModelDoes() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["zstd", "ZSTD", "*", "gzip", "x", ",", ";", "=", "q", "Q", " ", "\t", "0", "1", ".", "5", "0.5", "q=0", "q="]
        for _ in 0..<20_000 {
            let fields = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            #expect(AcceptEncoding.accepts("zstd", in: fields) == StringModel.accepts("zstd", in: fields), "\(fields)")
        }
    }

    /// `Accept-Encoding` read as strings: split on commas and semicolons (empty pieces dropped), trimmed, lowercased.
    enum StringModel {
        static func accepts(_ coding: String, in fields: [String]) -> Bool {
            var named: Bool?
            var anyOther: Bool?
            for element in fields.flatMap({ $0.split(separator: ",") }) {
                let parts = element.split(separator: ";")
                guard let name = parts.first.map(trim)?.lowercased(), !name.isEmpty else { continue }
                var weighted = true
                for parameter in parts.dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1)
                    guard pair.count == 2, trim(pair[0]).lowercased() == "q" else { continue }
                    let text = trim(pair[1])
                    let valid = text.count <= 5 && (text.first == "0" || text.first == "1")
                        && (text.count == 1 || Array(text)[1] == ".") && text.dropFirst(2).allSatisfy { $0.isASCII && $0.isNumber }
                    weighted = valid ? (Double(text).map { $0 > 0 && $0 <= 1 } ?? false) : false
                }
                if name == coding.lowercased() { named = weighted } else if name == "*" { anyOther = weighted }
            }
            return named ?? anyOther ?? false
        }

        private static func trim(_ text: Substring) -> Substring {
            guard let start = text.firstIndex(where: { $0 != " " && $0 != "\t" }), let end = text.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
            return text[start...end]
        }
    }
}
