/// Dictionary encoding of dimension values: each distinct string gets a small integer id, in order of first use,
/// so buckets store and compare 4-byte ids instead of strings.
public struct Symbols: Sendable {
    private var ids: [String: UInt32] = [:]
    private var strings: [String] = []
    private var stringBytes = 0

    public init() {}

    /// The id of `string`, assigned now if it is new.
    public mutating func id(_ string: String) -> UInt32 {
        if let id = ids[string] { return id }
        let id = UInt32(strings.count)
        ids[string] = id
        strings.append(string)
        stringBytes += string.utf8.count
        return id
    }

    /// The id of `string` if it was ever seen (a filter on an unseen value matches nothing).
    public func existingID(_ string: String) -> UInt32? {
        ids[string]
    }

    /// The string behind `id`.
    public subscript(id: UInt32) -> String {
        strings[Int(id)]
    }

    public var count: Int { strings.count }

    /// Approximate heap bytes: each string once in the table and once in the list, plus the entries.
    public var byteCount: Int { strings.count * 64 + stringBytes * 2 }
}
