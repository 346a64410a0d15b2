/// What a request's `Accept-Encoding` fields accept (RFC 9110, section 12.5.3): a list of content codings, each with
/// an optional weight (`;q=`), where a weight of 0 refuses the coding and `*` stands for every coding not named.
/// Codings are compared without regard to ASCII case. A field that cannot be read accepts nothing but the identity.
/// Read byte by byte, without allocating: every kept answer served asks it (it was 3% of a serve's CPU as strings).
enum AcceptEncoding {
    /// Whether `fields` (every `Accept-Encoding` field of a request, in order) accept `coding` (ASCII).
    static func accepts(_ coding: String, in fields: [String]) -> Bool {
        var verdict = Verdict()
        var wanted = coding
        wanted.withUTF8 { wanted in
            for var field in fields {
                field.withUTF8 { field in
                    for element in Self.segments(of: field[...], by: UInt8(ascii: ",")) {
                        verdict.read(element, wanted: wanted)
                    }
                }
            }
        }
        return verdict.named ?? verdict.anyOther ?? false
    }

    /// What the elements read so far say of the coding asked, and of `*`.
    private struct Verdict {
        var named: Bool?
        var anyOther: Bool?

        /// One element of the list: its first non-empty segment (by `;`) names a coding, the others are parameters,
        /// of which a `q` with a value gives its weight.
        mutating func read(_ element: Slice<UnsafeBufferPointer<UInt8>>, wanted: UnsafeBufferPointer<UInt8>) {
            var segments = AcceptEncoding.segments(of: element, by: UInt8(ascii: ";"))
            guard let first = segments.next() else { return }
            let name = AcceptEncoding.trimmed(first)
            guard !name.isEmpty else { return }
            var weighted = true
            while let parameter = segments.next() {
                // `key=value` after any `=` it starts with; one with nothing after its `=` is not a parameter.
                let body = parameter[(parameter.firstIndex { $0 != UInt8(ascii: "=") } ?? parameter.endIndex)...]
                guard let equals = body.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = body[body.startIndex..<equals], value = body[(equals + 1)...]
                guard !value.isEmpty, AcceptEncoding.equalIgnoringCase(AcceptEncoding.trimmed(key), "q".utf8) else { continue }
                weighted = AcceptEncoding.weight(AcceptEncoding.trimmed(value)).map { $0 > 0 } ?? false
            }
            if AcceptEncoding.equalIgnoringCase(name, wanted) {
                named = weighted
            } else if name.elementsEqual("*".utf8) {
                anyOther = weighted
            }
        }
    }

    /// The non-empty pieces of `bytes` between `separator`s, in order.
    private static func segments(of bytes: Slice<UnsafeBufferPointer<UInt8>>, by separator: UInt8) -> Segments {
        Segments(rest: bytes, separator: separator)
    }

    private struct Segments: Sequence, IteratorProtocol {
        var rest: Slice<UnsafeBufferPointer<UInt8>>
        let separator: UInt8

        mutating func next() -> Slice<UnsafeBufferPointer<UInt8>>? {
            while !rest.isEmpty {
                let end = rest.firstIndex(of: separator) ?? rest.endIndex
                let segment = rest[rest.startIndex..<end]
                rest = rest[(end == rest.endIndex ? end : end + 1)...]
                if !segment.isEmpty { return segment }
            }
            return nil
        }
    }

    /// `bytes` without the spaces and tabs around it.
    private static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !blank($0) }), let end = bytes.lastIndex(where: { !blank($0) }) else { return bytes[bytes.endIndex...] }
        return bytes[start...end]
    }

    private static func equalIgnoringCase(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { lowercase($0) == lowercase($1) }
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// A weight as the grammar writes it ("0" to "1" with at most three decimals); nil when it is not one.
    private static func weight(_ text: some Collection<UInt8>) -> Double? {
        let bytes = Array(text)
        guard bytes.count <= 5, let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1"),
              bytes.count == 1 || bytes[1] == UInt8(ascii: "."),
              bytes.dropFirst(2).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        guard let value = Double(String(decoding: bytes, as: UTF8.self)), value <= 1 else { return nil }
        return value
    }
}
