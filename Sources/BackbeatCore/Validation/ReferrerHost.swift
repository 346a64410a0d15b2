/// The host a page event's `referrer` names, as page analytics keep it (docs/events.md): lower case, without user,
/// port or a leading `www.`. A URL with a scheme (`https://host/...`) or without one (`//host/...`, `host/...`) is
/// read; what names no host of `A-Za-z0-9.-_` (or a bracketed IPv6 address) of at most 253 bytes reads as none.
/// Browsers give a referrer's host in ASCII (an international name in its `xn--` form), so nothing is lost by that.
enum ReferrerHost {
    /// The longest host kept, in bytes (the limit of a DNS name).
    static let maxLength = 253

    /// The host of `url` (UTF-8 bytes), lower case, or nil when none can be read.
    static func host(of url: UnsafeRawBufferPointer) -> [UInt8]? {
        let bytes = Array(url)
        var start = 0
        if let scheme = schemeEnd(bytes) {
            start = scheme
        } else if bytes.starts(with: [slash, slash]) {
            start = 2
        }
        var end = start
        while end < bytes.count, bytes[end] != slash, bytes[end] != question, bytes[end] != hash { end += 1 }
        var authority = bytes[start..<end]
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            // A user before the host is only read in a URL that says where its host begins.
            guard start > 0 else { return nil }
            authority = authority[(at + 1)...]
        }
        guard let host = withoutPort(authority), !host.isEmpty, host.count <= maxLength else { return nil }
        var lowered = host.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
        if lowered.first == UInt8(ascii: "[") {
            guard lowered.count > 2, lowered.dropFirst().dropLast().allSatisfy(isIPv6Byte) else { return nil }
        } else {
            guard lowered.allSatisfy(isHostByte) else { return nil }
        }
        // `www.example.com` is `example.com`; `www.com` stays what it is.
        if lowered.starts(with: Array("www.".utf8)), lowered.dropFirst(4).contains(UInt8(ascii: ".")) { lowered.removeFirst(4) }
        return lowered
    }

    /// Whether `text` is a referrer as page events store it: a host as `host(of:)` gives it, or
    /// `PageEvent.directReferrer` or `.unknownReferrer`.
    static func isStored(_ text: String) -> Bool {
        if text == PageEvent.directReferrer || text == PageEvent.unknownReferrer { return true }
        var text = text
        return text.withUTF8 { bytes in host(of: UnsafeRawBufferPointer(bytes)).map { $0.elementsEqual(bytes) } ?? false }
    }

    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")

    /// Where the host begins after a scheme (`[A-Za-z][A-Za-z0-9+.-]*://`), or nil when `bytes` begins with none.
    private static func schemeEnd(_ bytes: [UInt8]) -> Int? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0,
              bytes[colon...].starts(with: Array("://".utf8)) else { return nil }
        let scheme = bytes[..<colon]
        guard isLetter(scheme[0]), scheme.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return nil }
        return colon + 3
    }

    /// The host of an authority without its port (`host:8080`, `[::1]:8080`); nil when what follows the host is not a
    /// port.
    private static func withoutPort(_ authority: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let host: ArraySlice<UInt8>
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = authority[...close]
        } else {
            host = authority[..<(authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex)]
        }
        let rest = authority[host.endIndex...]
        guard rest.isEmpty || (rest.first == UInt8(ascii: ":") && rest.dropFirst().allSatisfy(isDigit)) else { return nil }
        return host
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isIPv6Byte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }
}
