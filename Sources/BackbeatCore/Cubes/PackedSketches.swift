/// The listener sketches of a sealed day, packed: the explicit-mode ones (most of them: a track's listeners of one
/// day are usually few) share one sorted array of hashes with an index, instead of one heap array each (about 80
/// bytes of overhead per sketch); register-mode sketches are kept whole.
struct PackedSketches<Key: Hashable & Comparable & Sendable>: Sendable {
    private let keys: [Key]
    /// `starts[i]..<starts[i + 1]` are the hashes of `keys[i]` (empty for a register-mode sketch).
    private let starts: [UInt32]
    private let hashes: [Int64]
    private let dense: [Key: HyperLogLog]

    init(_ sketches: [Key: HyperLogLog]) {
        var keys: [Key] = []
        var starts: [UInt32] = []
        var hashes: [Int64] = []
        var dense: [Key: HyperLogLog] = [:]
        keys.reserveCapacity(sketches.count)
        starts.reserveCapacity(sketches.count + 1)
        for key in sketches.keys.sorted() {
            let sketch = sketches[key]!
            keys.append(key)
            starts.append(UInt32(hashes.count))
            switch sketch.storage {
            case .empty: break
            case .explicit(let explicit): hashes.append(contentsOf: explicit)
            case .registers: dense[key] = sketch
            }
        }
        starts.append(UInt32(hashes.count))
        self.keys = keys
        self.starts = starts
        self.hashes = hashes
        self.dense = dense
    }

    /// The sketch of `key`, if there is one.
    subscript(key: Key) -> HyperLogLog? {
        if let sketch = dense[key] { return sketch }
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        guard low < keys.count, keys[low] == key else { return nil }
        var sketch = HyperLogLog()
        let range = Int(starts[low])..<Int(starts[low + 1])
        if !range.isEmpty { sketch.storage = .explicit(Array(hashes[range])) }
        return sketch
    }

    /// Every sketch, unpacked (to merge late additions before packing again).
    func unpacked() -> [Key: HyperLogLog] {
        var result: [Key: HyperLogLog] = [:]
        result.reserveCapacity(keys.count)
        for key in keys { result[key] = self[key] }
        return result
    }

    /// Approximate heap bytes.
    var byteCount: Int {
        keys.count * (MemoryLayout<Key>.stride + 4) + hashes.count * 8 + dense.count * (HyperLogLog.registerCount + 96) + 128
    }
}

extension ArtistTrack: Comparable {
    static func < (lhs: ArtistTrack, rhs: ArtistTrack) -> Bool {
        (lhs.artist, lhs.track) < (rhs.artist, rhs.track)
    }
}
