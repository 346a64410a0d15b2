/// One cube's day bucket once the day no longer takes (many) events: an immutable, compact encoding that a query
/// reads in place, one artist at a time, without decoding anything else.
///
/// Layout: `artists` (sorted dictionary ids) and `offsets` index into `bytes`, where each artist's rows are stored
/// sorted by cell as varints: the row count, then per row the hour delta from the previous row (hour-grain cubes),
/// the dimension ids, and the dataset's counters (zigzag varints; money as a 128-bit zigzag varint of micros).
struct SealedCube: Sendable {
    private let artists: [UInt32]
    private let offsets: [UInt32]
    private let bytes: [UInt8]
    let dataset: Dataset
    let hourly: Bool
    let dimensionCount: Int
    /// Counters that are not zero, the denominator of "bytes per non-zero cell".
    let nonZeroCells: Int

    init(_ cells: [UInt32: OpenCells], dataset: Dataset, hourly: Bool, dimensionCount: Int) {
        self.dataset = dataset
        self.hourly = hourly
        self.dimensionCount = dimensionCount
        var artists: [UInt32] = []
        var offsets: [UInt32] = []
        var bytes: [UInt8] = []
        var nonZero = 0
        artists.reserveCapacity(cells.count)
        offsets.reserveCapacity(cells.count + 1)
        for artist in cells.keys.sorted() {
            let rows = cells[artist]!.sorted { $0.key < $1.key }
            artists.append(artist)
            offsets.append(UInt32(bytes.count))
            Varint.append(UInt64(rows.count), to: &bytes)
            var previousHour: UInt32 = 0
            for (key, measures) in rows {
                if hourly {
                    Varint.append(UInt64(key.hour - previousHour), to: &bytes)
                    previousHour = key.hour
                }
                for position in 0..<dimensionCount { Varint.append(UInt64(key[position]), to: &bytes) }
                switch dataset {
                case .streams, .funnel:
                    Varint.append(signed: measures.m0, to: &bytes)
                    Varint.append(signed: measures.m1, to: &bytes)
                    Varint.append(signed: measures.m2, to: &bytes)
                case .revenue:
                    Varint.append(signed: measures.amount, to: &bytes)
                    Varint.append(signed: measures.m1, to: &bytes)
                case .social, .page:
                    Varint.append(signed: measures.m0, to: &bytes)
                }
                nonZero += measures.nonZeroCount(dataset)
            }
        }
        offsets.append(UInt32(bytes.count))
        self.artists = artists
        self.offsets = offsets
        self.bytes = bytes
        self.nonZeroCells = nonZero
    }

    /// Encoded bytes, index included.
    var byteCount: Int { bytes.count + artists.count * 4 + offsets.count * 4 + 64 }

    /// Every artist id present.
    var artistIDs: [UInt32] { artists }

    /// Calls `body` with each row of `artist` (of every artist when nil).
    func forEachRow(artist: UInt32?, _ body: (UInt32, CellKey, Measures) -> Void) {
        if let artist {
            guard let index = indexOf(artist) else { return }
            decodeRows(at: index, body)
        } else {
            for index in artists.indices { decodeRows(at: index, body) }
        }
    }

    /// Every cell, decoded (for re-sealing a day that took late events).
    func decodeAll() -> [UInt32: OpenCells] {
        var cells: [UInt32: OpenCells] = [:]
        forEachRow(artist: nil) { artist, key, measures in cells[artist, default: [:]][key] = measures }
        return cells
    }

    private func indexOf(_ artist: UInt32) -> Int? {
        var low = 0
        var high = artists.count
        while low < high {
            let middle = (low + high) / 2
            if artists[middle] < artist { low = middle + 1 } else { high = middle }
        }
        return low < artists.count && artists[low] == artist ? low : nil
    }

    private func decodeRows(at index: Int, _ body: (UInt32, CellKey, Measures) -> Void) {
        let artist = artists[index]
        bytes.withUnsafeBufferPointer { buffer in
            var reader = VarintReader(bytes: buffer, position: Int(offsets[index]))
            let count = Int(reader.next(as: UInt64.self))
            var hour: UInt32 = 0
            for _ in 0..<count {
                if hourly { hour += UInt32(truncatingIfNeeded: reader.next(as: UInt64.self)) }
                let key = CellKey(hour: hour, dimensions: dimensionCount) { _ in UInt32(truncatingIfNeeded: reader.next(as: UInt64.self)) }
                var measures = Measures()
                switch dataset {
                case .streams, .funnel:
                    measures.m0 = reader.nextSigned()
                    measures.m1 = reader.nextSigned()
                    measures.m2 = reader.nextSigned()
                case .revenue:
                    measures.amount = reader.nextSigned128()
                    measures.m1 = reader.nextSigned()
                case .social, .page:
                    measures.m0 = reader.nextSigned()
                }
                body(artist, key, measures)
            }
        }
    }
}
