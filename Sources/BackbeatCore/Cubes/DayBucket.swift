/// An artist and a track, as dictionary ids: the key of the per-track listener sketches.
struct ArtistTrack: Hashable, Sendable {
    var artist: UInt32
    var track: UInt32
}

/// Everything held in memory for one UTC day: each cube's cells, open (mutable, for days still taking events)
/// and sealed (compact, read in place), plus the day's listener sketches.
///
/// A sealed day that receives late events keeps them in its open part; the next sealing merges both.
struct DayBucket: Sendable {
    var open: [[UInt32: OpenCells]]
    var sealed: [SealedCube?]
    /// Listener sketches added since the day was last sealed.
    var artistListeners: [UInt32: HyperLogLog] = [:]
    var trackListeners: [ArtistTrack: HyperLogLog] = [:]
    /// Listener sketches as of the last sealing.
    var sealedArtistListeners: PackedSketches<UInt32>?
    var sealedTrackListeners: PackedSketches<ArtistTrack>?

    init(cubeCount: Int) {
        open = Array(repeating: [:], count: cubeCount)
        sealed = Array(repeating: nil, count: cubeCount)
    }

    /// Whether some cube cells or sketches are not yet sealed.
    var hasOpenCells: Bool { open.contains { !$0.isEmpty } || !artistListeners.isEmpty || !trackListeners.isEmpty }

    /// Open cells per sealed cell (infinity when nothing is sealed yet).
    var openShare: Double {
        let sealedCells = sealed.reduce(0) { $0 + ($1?.nonZeroCells ?? 0) }
        let openCells = open.reduce(0) { total, cube in cube.values.reduce(total) { $0 + $1.count } }
        return sealedCells == 0 ? .infinity : Double(openCells) / Double(sealedCells)
    }

    /// Approximate heap bytes (an open cell costs about 96 bytes in its dictionary).
    var byteCount: Int {
        var total = 128
        for cube in open {
            total += cube.count * 64
            for cells in cube.values { total += cells.count * 96 }
        }
        for cube in sealed { total += cube?.byteCount ?? 0 }
        total += artistListeners.values.reduce(0) { $0 + $1.byteCount + 48 } + trackListeners.values.reduce(0) { $0 + $1.byteCount + 48 }
        total += (sealedArtistListeners?.byteCount ?? 0) + (sealedTrackListeners?.byteCount ?? 0)
        return total
    }

    /// The day's listeners of `artist`, sealed and open.
    func artistSketch(_ artist: UInt32) -> HyperLogLog? {
        Self.combine(sealedArtistListeners?[artist], artistListeners[artist])
    }

    /// The day's listeners of a track, sealed and open.
    func trackSketch(_ key: ArtistTrack) -> HyperLogLog? {
        Self.combine(sealedTrackListeners?[key], trackListeners[key])
    }

    private static func combine(_ sealed: HyperLogLog?, _ open: HyperLogLog?) -> HyperLogLog? {
        guard var sealed else { return open }
        if let open { sealed.formUnion(open) }
        return sealed
    }

    /// Encodes every cube's open cells (merged with what was sealed before) into its sealed form.
    mutating func seal(_ cubes: [Cube]) {
        for index in cubes.indices where !open[index].isEmpty {
            var cells = open[index]
            if let previous = sealed[index] {
                for (artist, previousCells) in previous.decodeAll() {
                    for (key, measures) in previousCells { cells[artist, default: [:]][key, default: Measures()] += measures }
                }
            }
            sealed[index] = SealedCube(cells, dataset: cubes[index].dataset, hourly: cubes[index].grain == .hour, dimensionCount: cubes[index].dimensions.count)
            open[index] = [:]
        }
        if !artistListeners.isEmpty {
            sealedArtistListeners = PackedSketches(Self.merging(sealedArtistListeners?.unpacked(), artistListeners))
            artistListeners = [:]
        }
        if !trackListeners.isEmpty {
            sealedTrackListeners = PackedSketches(Self.merging(sealedTrackListeners?.unpacked(), trackListeners))
            trackListeners = [:]
        }
    }

    private static func merging<Key>(_ sealed: [Key: HyperLogLog]?, _ open: [Key: HyperLogLog]) -> [Key: HyperLogLog] {
        guard var merged = sealed else { return open }
        for (key, sketch) in open { merged[key, default: HyperLogLog()].formUnion(sketch) }
        return merged
    }

    /// Calls `body` with every cell of cube `index` for `artist` (every artist when nil), sealed and open.
    func forEachCell(cube index: Int, artist: UInt32?, _ body: (UInt32, CellKey, Measures) -> Void) {
        sealed[index]?.forEachRow(artist: artist, body)
        if let artist {
            open[index][artist]?.forEach { body(artist, $0.key, $0.value) }
        } else {
            for (artist, cells) in open[index] {
                for (key, measures) in cells { body(artist, key, measures) }
            }
        }
    }
}
