#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Dictionary encoding of dimension values by their bytes: each distinct value gets a dense integer id, in order of
/// first use, and no String is made to find it. Values are stored once, back to back.
public struct ValueDictionary: Sendable {
    /// Open addressing: `slots[i]` is an id plus one, 0 for an empty slot. The count is a power of two.
    private var slots: [UInt32]
    private var hashes: [UInt64] = []
    private var storage: [UInt8] = []
    /// `ends[id]`: where the value `id` ends in `storage` (it starts where the one before ends).
    private var ends: [Int] = []
    /// Chosen per dictionary, so that no input can be made to collide everywhere.
    private let seed = UInt64.random(in: .min ... .max)

    public init() {
        slots = Array(repeating: 0, count: 64)
    }

    /// Number of distinct values.
    public var count: Int { ends.count }

    /// The id of the value `bytes`, assigned now if it is new.
    public mutating func id(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let hash = Self.hash(bytes, seed: seed)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { break }
            let id = Int(entry - 1)
            if hashes[id] == hash, equals(id, bytes) { return UInt32(id) }
            slot = (slot + 1) & mask
        }
        let id = UInt32(ends.count)
        storage.append(contentsOf: bytes)
        ends.append(storage.count)
        hashes.append(hash)
        slots[slot] = id + 1
        if ends.count * 2 > slots.count { grow() }
        return id
    }

    /// The id of `text`, assigned now if it is new.
    public mutating func id(_ text: String) -> UInt32 {
        var text = text
        return text.withUTF8 { id(UnsafeRawBufferPointer($0)) }
    }

    /// Interns every value of `other`, in its order; answers each of `other`'s ids' id here (`InternedRowKey.remapped`).
    public mutating func intern(_ other: ValueDictionary) -> [UInt32] {
        var ids: [UInt32] = []
        ids.reserveCapacity(other.count)
        for id in 0..<UInt32(other.count) { ids.append(other.withBytes(id) { self.id($0) }) }
        return ids
    }

    /// The bytes of the value `id`.
    public func withBytes<Result>(_ id: UInt32, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let end = ends[Int(id)]
        let start = id == 0 ? 0 : ends[Int(id) - 1]
        return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    /// The value `id` as a String.
    public subscript(id: UInt32) -> String {
        withBytes(id) { String(decoding: $0, as: UTF8.self) }
    }

    private func equals(_ id: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let end = ends[id]
        let start = id == 0 ? 0 : ends[id - 1]
        guard end - start == bytes.count else { return false }
        return storage.withUnsafeBytes { stored in
            bytes.isEmpty || memcmp(stored.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0
        }
    }

    private mutating func grow() {
        var larger = [UInt32](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for (id, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = UInt32(id + 1)
        }
        slots = larger
    }

    /// A 64-bit hash of a short value: its bytes eight at a time, multiplied and mixed.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var hash: UInt64 = seed ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 29
            offset += 8
        }
        if offset < bytes.count {
            var tail: UInt64 = 0
            for index in offset..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
            hash = (hash ^ tail) &* 0x94D0_49BB_1331_11EB
        }
        hash ^= hash >> 31
        hash &*= 0xBF58_476D_1CE4_E5B9
        return hash ^ (hash >> 32)
    }
}
