/// An IANA time zone name as the database spells them (`America/Los_Angeles`, `Asia/Kathmandu`, `Etc/GMT+5`, `UTC`):
/// components of ASCII letters, digits, `_`, `+` and `-`, joined by `/`. Only the spelling is checked here: whether
/// the database holds such a zone is the loader's to say. A well-formed name is also a safe relative path (no `.`,
/// `..` or empty component, no leading `/`).
public struct ZoneName: Hashable, Sendable, CustomStringConvertible {
    public let text: String

    /// The longest name taken (the database's longest is 32 characters).
    public static let maxLength = 64

    /// nil when `text` is not spelled as a zone name.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maxLength else { return nil }
        for component in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let first = component.first, first != UInt8(ascii: "-"),
                  component.allSatisfy(Self.isNameByte)
            else { return nil }
        }
        self.text = text
    }

    public var description: String { text }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
