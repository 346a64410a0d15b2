/// Counts the changes to what the memory layers answer for each artist, so that an answer made from the layers can
/// be reused for as long as nothing it read changed: `stamp(of:)` before the answer equals `stamp(of:)` now.
///
/// Artists share `slotCount` counters by the hash of their id: a change to one artist also retires the answers of
/// the few that share its counter, never fewer. A change that may touch any artist (a snapshot installed, a change
/// of ownership, the stored numbers replaced or dropped) moves `everything`.
public struct ArtistVersions: Sendable {
    public static let slotCount = 4096

    /// What an answer for one artist read, as of some layers.
    public struct Stamp: Sendable, Hashable {
        let everything: UInt64
        let artist: UInt64
    }

    private var slots = [UInt64](repeating: 0, count: slotCount)
    private var everything: UInt64 = 0

    public init() {}

    public func stamp(of artist: String) -> Stamp {
        Stamp(everything: everything, artist: slots[Self.slot(of: artist)])
    }

    /// `artists`' answers changed.
    public mutating func changed(_ artists: ArtistSlots) {
        artists.forEachSlot { slots[$0] &+= 1 }
    }

    /// Any artist's answer may have changed.
    public mutating func changedEverything() {
        everything &+= 1
    }

    /// The counter of `artist`: the same in every process (MurmurHash3 of its id), so that a set of them can travel
    /// between processes (`ArtistSlots.hex`).
    static func slot(of artist: String) -> Int {
        Int(truncatingIfNeeded: MurmurHash3.hash64(artist)) & (slotCount - 1)
    }
}

/// A set of artists as the counters of `ArtistVersions` they use.
public struct ArtistSlots: Sendable, Equatable {
    private var bits = [UInt64](repeating: 0, count: ArtistVersions.slotCount / 64)

    public init() {}

    public init(_ artists: some Sequence<String>) {
        for artist in artists { insert(artist) }
    }

    public mutating func insert(_ artist: String) {
        let slot = ArtistVersions.slot(of: artist)
        bits[slot >> 6] |= 1 << UInt64(slot & 63)
    }

    public var isEmpty: Bool {
        bits.allSatisfy { $0 == 0 }
    }

    public mutating func formUnion(_ other: ArtistSlots) {
        for index in bits.indices { bits[index] |= other.bits[index] }
    }

    /// The set as text: each slot a bit, the words in order, each as 16 hexadecimal digits (1,024 characters).
    public var hex: String {
        bits.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    /// The set `hex` wrote; nil for any other text.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == bits.count * 16 else { return nil }
        for index in bits.indices {
            guard let word = UInt64(String(decoding: utf8[index * 16..<(index + 1) * 16], as: UTF8.self), radix: 16) else { return nil }
            bits[index] = word
        }
    }

    func forEachSlot(_ body: (Int) -> Void) {
        for (index, word) in bits.enumerated() {
            var rest = word
            while rest != 0 {
                body(index << 6 | rest.trailingZeroBitCount)
                rest &= rest - 1
            }
        }
    }
}
