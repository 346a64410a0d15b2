/// A cube block's rows, decoded (`CubeBlock.decode`) or to be encoded: per row its slot of the day at the cube's
/// grain (`Cube.Grain.slot`; empty for a daily cube), its value of each dimension (an index into that dimension's dictionary) and its sums.
public struct BlockRows: Equatable, Sendable {
    public var slots: [Int16] = []
    /// Per dimension, its distinct values.
    public var dictionaries: [[String]]
    /// Per dimension, each row's index into the dimension's dictionary.
    public var indexes: [[Int]]
    public var sums: [CubeRowSums] = []

    public init(dimensions: Int) {
        dictionaries = Array(repeating: [], count: dimensions)
        indexes = Array(repeating: [], count: dimensions)
    }

    public var count: Int { sums.count }

    /// Row `row`'s values, in the cube's dimension order.
    public func values(of row: Int) -> [String] {
        indexes.indices.map { dictionaries[$0][indexes[$0][row]] }
    }

    /// These rows and `other`'s, summed per key (slot and values): what a block holds once a flush's rows of the same
    /// artist-day are merged into it. Rows are matched by their dictionary indexes, `other`'s renumbered into these.
    public func merging(_ other: BlockRows) -> BlockRows {
        var merged = self
        var renumbered: [[Int]] = []
        for dimension in dictionaries.indices {
            var entries = Dictionary(dictionaries[dimension].enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            renumbered.append(other.dictionaries[dimension].map { value in
                if let index = entries[value] { return index }
                merged.dictionaries[dimension].append(value)
                entries[value] = merged.dictionaries[dimension].count - 1
                return merged.dictionaries[dimension].count - 1
            })
        }
        var places: [[Int]: Int] = [:]
        places.reserveCapacity(count + other.count)
        for row in 0..<count {
            places[(slots.isEmpty ? [] : [Int(slots[row])]) + indexes.map { $0[row] }] = row
        }
        for row in 0..<other.count {
            let rowIndexes = renumbered.indices.map { renumbered[$0][other.indexes[$0][row]] }
            let key = (other.slots.isEmpty ? [] : [Int(other.slots[row])]) + rowIndexes
            if let place = places[key] {
                merged.sums[place] += other.sums[row]
                continue
            }
            places[key] = merged.count
            if !other.slots.isEmpty { merged.slots.append(other.slots[row]) }
            for (dimension, index) in rowIndexes.enumerated() { merged.indexes[dimension].append(index) }
            merged.sums.append(other.sums[row])
        }
        return merged
    }
}
