/// The key of a `CellTable`: a few integers, hashed by mixing them (no `Hasher` per lookup).
public protocol TableKey: Equatable, Sendable {
    /// A well-mixed hash of the key's fields, from `seed`.
    func hash(seed: UInt64) -> UInt64
}

/// A hash table from interned cell keys to their measures, for adding one event at a time: keys and values are kept
/// in two dense arrays in order of first use, found through open addressing with a cheap integer hash. A slot also
/// holds the upper half of its key's hash, so that a probe passes other keys' slots without reading their keys (a
/// cache miss each, in a table of a batch's cells).
public struct CellTable<Key: TableKey, Value: Sendable>: Sendable {
    public private(set) var keys: [Key] = []
    public private(set) var values: [Value] = []
    /// Per slot: the upper 32 bits of its key's hash, then the key's index plus one (0: empty); a power of two, at
    /// most half full.
    private var slots: [UInt64] = Array(repeating: 0, count: 16)
    /// Chosen per table, so that no input can be made to collide everywhere.
    private let seed = UInt64.random(in: .min ... .max)

    public init() {}

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// Calls `update` on the value of `key`, which starts as `initial` when the key is new.
    @inline(__always)
    public mutating func update(_ key: Key, initial: @autoclosure () -> Value, _ update: (inout Value) -> Void) {
        let mask = slots.count - 1
        let hash = key.hash(seed: seed)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { break }
            if entry >> 32 == hash >> 32 {
                let index = Self.index(entry)
                if keys[index] == key {
                    update(&values[index])
                    return
                }
            }
            slot = (slot + 1) & mask
        }
        var value = initial()
        update(&value)
        slots[slot] = Self.entry(hash, index: keys.count)
        keys.append(key)
        values.append(value)
        if keys.count * 2 > slots.count { grow() }
    }

    /// The value of `key`, if it was added.
    public subscript(key: Key) -> Value? {
        let mask = slots.count - 1
        let hash = key.hash(seed: seed)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            if slots[slot] >> 32 == hash >> 32, keys[Self.index(slots[slot])] == key { return values[Self.index(slots[slot])] }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// A table that holds `count` keys before it grows (its slots and arrays allocated once, not doubled up to it).
    public init(capacity count: Int) {
        var slotCount = 16
        while slotCount < count * 2 { slotCount *= 2 }
        slots = Array(repeating: 0, count: slotCount)
        keys.reserveCapacity(count)
        values.reserveCapacity(count)
    }

    /// Every key with its value, in order of first use.
    public var rows: Zip2Sequence<[Key], [Value]> { zip(keys, values) }

    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for (index, key) in keys.enumerated() {
            let hash = key.hash(seed: seed)
            var slot = Int(truncatingIfNeeded: hash) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = Self.entry(hash, index: index)
        }
        slots = larger
    }

    /// A slot's entry for the key of `hash` at `index`.
    @inline(__always)
    private static func entry(_ hash: UInt64, index: Int) -> UInt64 {
        hash & 0xFFFF_FFFF_0000_0000 | UInt64(index + 1)
    }

    /// The key index of a slot's (non-empty) entry.
    @inline(__always)
    private static func index(_ entry: UInt64) -> Int {
        Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
    }
}

/// Mixing for `TableKey` hashes (the finalizer of SplitMix64).
enum TableHash {
    @inline(__always)
    static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        var z = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The case number of an enum without payloads (its one-byte tag), for hashing.
    @inline(__always)
    static func ordinal<Value: CaseIterable>(_ value: Value) -> UInt64 {
        guard MemoryLayout<Value>.size == 1 else { return 0 }
        return UInt64(withUnsafeBytes(of: value) { $0[0] })
    }
}
