import BackbeatCore

/// The integers one flush's rows in a full hourly `_delta` table name their dimension values by (migration 0011):
/// the flush's number (from the sequence `delta_flushes`) in the upper 32 bits, the value's number within the flush
/// below: its id in the delta's `ValueDictionary`, or, for a value with a fixed text (an enum case, the empty
/// value), `fixedBase` plus its `InternedValue.fixedPlace`. It remembers which values the rows used, so that the
/// flush writes exactly those to `<table>_delta_values`.
struct FlushValueIDs {
    private let base: Int64
    private var usedIDs: [Bool]
    private var usedFixed = [Bool](repeating: false, count: InternedValue.fixedValues.count)

    /// Where the numbers of fixed values start: above any dictionary id a flush can hold.
    private static let fixedBase: Int64 = 0xFFFF_0000

    /// `flush`: the flush's number; `values`: the dictionary of the rows to be named.
    init(flush: Int64, values: ValueDictionary) {
        base = flush << 32
        usedIDs = [Bool](repeating: false, count: values.count)
    }

    /// The integer that names `value` in this flush's rows; `value` is marked as used.
    mutating func id(of value: InternedValue) -> Int64 {
        if case .id(let id) = value {
            usedIDs[Int(id)] = true
            return base | Int64(id)
        }
        let place = value.fixedPlace!
        usedFixed[place] = true
        return base | (Self.fixedBase + Int64(place))
    }

    /// Each used value with its integer.
    var used: [(id: Int64, value: InternedValue)] {
        usedIDs.indices.filter { usedIDs[$0] }.map { (base | Int64($0), .id(UInt32($0))) }
            + usedFixed.indices.filter { usedFixed[$0] }.map { (base | (Self.fixedBase + Int64($0)), InternedValue.fixedValues[$0]) }
    }
}
