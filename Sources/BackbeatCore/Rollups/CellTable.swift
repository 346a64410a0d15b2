/// The key of a `CellTable`: a few integers, hashed by mixing them (no `Hasher` per lookup).
public protocol TableKey: Equatable, Sendable {
    /// A well-mixed hash of the key's fields, from `seed`.
    func hash(seed: UInt64) -> UInt64
}

/// A hash table from interned cell keys to their measures, for adding one event at a time: keys and values are kept
/// in two dense arrays in order of first use, found through open addressing with a cheap integer hash.
public struct CellTable<Key: TableKey, Value: Sendable>: Sendable {
    public private(set) var keys: [Key] = []
    public private(set) var values: [Value] = []
    /// Index plus one of the key in each slot, 0 when empty; a power of two, at most half full.
    private var slots: [UInt32] = Array(repeating: 0, count: 16)
    /// Chosen per table, so that no input can be made to collide everywhere.
    private let seed = UInt64.random(in: .min ... .max)

    public init() {}

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// Calls `update` on the value of `key`, which starts as `initial` when the key is new.
    @inline(__always)
    public mutating func update(_ key: Key, initial: @autoclosure () -> Value, _ update: (inout Value) -> Void) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: key.hash(seed: seed)) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { break }
            let index = Int(entry - 1)
            if keys[index] == key {
                update(&values[index])
                return
            }
            slot = (slot + 1) & mask
        }
        var value = initial()
        update(&value)
        slots[slot] = UInt32(keys.count + 1)
        keys.append(key)
        values.append(value)
        if keys.count * 2 > slots.count { grow() }
    }

    /// The value of `key`, if it was added.
    public subscript(key: Key) -> Value? {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: key.hash(seed: seed)) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot] - 1)
            if keys[index] == key { return values[index] }
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
        var larger = [UInt32](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for (index, key) in keys.enumerated() {
            var slot = Int(truncatingIfNeeded: key.hash(seed: seed)) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = UInt32(index + 1)
        }
        slots = larger
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
