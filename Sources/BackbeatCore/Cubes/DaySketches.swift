/// One day's sketches of one distinct count (`DayBucket.listeners`, `.visitors`): per artist, and per artist and key
/// (a track for listeners, a page for visitors), those added since the day was last sealed and, packed, those as of
/// the last sealing.
struct DaySketches: Sendable {
    var artists: [UInt32: HyperLogLog] = [:]
    var keyed: [ArtistTrack: HyperLogLog] = [:]
    var sealedArtists: PackedSketches<UInt32>?
    var sealedKeyed: PackedSketches<ArtistTrack>?

    /// Whether some sketches are not yet sealed.
    var hasOpen: Bool { !artists.isEmpty || !keyed.isEmpty }

    /// Approximate heap bytes.
    var byteCount: Int {
        artists.values.reduce(0) { $0 + $1.byteCount + 48 } + keyed.values.reduce(0) { $0 + $1.byteCount + 48 }
            + (sealedArtists?.byteCount ?? 0) + (sealedKeyed?.byteCount ?? 0)
    }

    /// Adds one hash to the day's sketches of `artist` and of its `key`.
    mutating func add(_ hash: Int64, artist: UInt32, key: UInt32) {
        artists[artist, default: HyperLogLog()].add(hash: hash)
        add(hash, artist: artist, onlyKey: key)
    }

    /// Adds one hash to the day's sketch of `artist`'s `key` only (one whose artist's sketch has the hash already).
    mutating func add(_ hash: Int64, artist: UInt32, onlyKey key: UInt32) {
        keyed[ArtistTrack(artist: artist, track: key), default: HyperLogLog()].add(hash: hash)
    }

    /// Unions `sketch` into the day's sketch of `artist`, or of its `key` when given.
    mutating func add(artist: UInt32, key: UInt32?, _ sketch: HyperLogLog) {
        if let key {
            keyed[ArtistTrack(artist: artist, track: key), default: HyperLogLog()].formUnion(sketch)
        } else {
            artists[artist, default: HyperLogLog()].formUnion(sketch)
        }
    }

    /// The day's sketch of `artist`, sealed and open.
    func artistSketch(_ artist: UInt32) -> HyperLogLog? {
        Self.combine(sealedArtists?[artist], artists[artist])
    }

    /// The day's sketch of an artist's key, sealed and open.
    func keyedSketch(_ key: ArtistTrack) -> HyperLogLog? {
        Self.combine(sealedKeyed?[key], keyed[key])
    }

    /// Every sketch, sealed and open parts apart: `artist` for an artist's, `keyed` for a key's.
    func forEach(artist: (UInt32, HyperLogLog) -> Void, keyed: (ArtistTrack, HyperLogLog) -> Void) {
        for sketches in [sealedArtists?.unpacked() ?? [:], artists] {
            for (id, sketch) in sketches { artist(id, sketch) }
        }
        for sketches in [sealedKeyed?.unpacked() ?? [:], self.keyed] {
            for (key, sketch) in sketches { keyed(key, sketch) }
        }
    }

    /// Packs the open sketches (merged with what was sealed before).
    mutating func seal() {
        if !artists.isEmpty {
            sealedArtists = PackedSketches(Self.merging(sealedArtists?.unpacked(), artists))
            artists = [:]
        }
        if !keyed.isEmpty {
            sealedKeyed = PackedSketches(Self.merging(sealedKeyed?.unpacked(), keyed))
            keyed = [:]
        }
    }

    private static func combine(_ sealed: HyperLogLog?, _ open: HyperLogLog?) -> HyperLogLog? {
        guard var sealed else { return open }
        if let open { sealed.formUnion(open) }
        return sealed
    }

    private static func merging<Key>(_ sealed: [Key: HyperLogLog]?, _ open: [Key: HyperLogLog]) -> [Key: HyperLogLog] {
        guard var merged = sealed else { return open }
        for (key, sketch) in open { merged[key, default: HyperLogLog()].formUnion(sketch) }
        return merged
    }
}
