import BackbeatCore

/// The integers one flush's rows in a full hourly `_delta` table name their dimension values by (migration 0011):
/// the flush's number (from the sequence `delta_flushes`) in the upper 32 bits, the value's number within the flush
/// below: its id in the delta's `ValueDictionary`, or, for a value with a fixed text (an enum case, the empty
/// value), `fixedBase` plus its place in `fixed`. It remembers which values the rows used, so that the flush writes
/// exactly those to `<table>_delta_values`.
struct FlushValueIDs {
    private let base: Int64
    private var usedIDs: [Bool]
    private var usedFixed = [Bool](repeating: false, count: Self.fixed.count)

    /// Every value with a fixed text, in a fixed order.
    static let fixed: [InternedValue] = AgeRange.allCases.map(InternedValue.ageRange) + Gender.allCases.map(InternedValue.gender)
        + RevenueSource.allCases.map(InternedValue.source) + [.none]
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
        let place = Self.place(of: value)
        usedFixed[place] = true
        return base | (Self.fixedBase + Int64(place))
    }

    /// Each used value's integer and text.
    func usedValues(in values: ValueDictionary, _ body: (Int64, UnsafeRawBufferPointer) -> Void) {
        for (id, used) in usedIDs.enumerated() where used {
            values.withBytes(UInt32(id)) { body(base | Int64(id), $0) }
        }
        for (place, used) in usedFixed.enumerated() where used {
            var text = Self.fixed[place].fixedText ?? ""
            text.withUTF8 { body(base | (Self.fixedBase + Int64(place)), UnsafeRawBufferPointer($0)) }
        }
    }

    private static func place(of value: InternedValue) -> Int {
        switch value {
        case .id: preconditionFailure("a dictionary value has no fixed place")
        case .ageRange(let range): AgeRange.allCases.firstIndex(of: range)!
        case .gender(let gender): AgeRange.allCases.count + Gender.allCases.firstIndex(of: gender)!
        case .source(let source): AgeRange.allCases.count + Gender.allCases.count + RevenueSource.allCases.firstIndex(of: source)!
        case .none: fixed.count - 1
        }
    }
}
