/// An artist and a track (or a page), as dictionary ids: the key of the per-track listener sketches (the per-page
/// visitor sketches).
struct ArtistTrack: Hashable, Sendable {
    var artist: UInt32
    var track: UInt32
}

/// Everything held in memory for one UTC day: each cube's cells, open (mutable, for days still taking events)
/// and sealed (compact, read in place), plus the day's listener and visitor sketches.
///
/// A sealed day that receives late events keeps them in its open part; the next sealing merges both.
struct DayBucket: Sendable {
    var open: [[UInt32: OpenCells]]
    var sealed: [SealedCube?]
    /// The unique listeners of plays, per artist and per track.
    var listeners = DaySketches()
    /// The unique visitors of page events, per artist and per page.
    var visitors = DaySketches()

    init(cubeCount: Int) {
        open = Array(repeating: [:], count: cubeCount)
        sealed = Array(repeating: nil, count: cubeCount)
    }

    /// Whether some cube cells or sketches are not yet sealed.
    var hasOpenCells: Bool { open.contains { !$0.isEmpty } || listeners.hasOpen || visitors.hasOpen }

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
        return total + listeners.byteCount + visitors.byteCount
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
        listeners.seal()
        visitors.seal()
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
