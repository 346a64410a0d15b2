@testable import BackbeatCore
import BackbeatTestSupport
import Testing

/// The open-addressing table of a dedup window holds exactly what a dictionary would, through inserts, changes and
/// removals, however the ids crowd into the same slots.
struct DedupTableTests {
    @Test func itHoldsWhatADictionaryHoldsThroughInsertsChangesAndRemovals() {
        var random = TestRandom()
        var table = DedupTable()
        var oracle: [UInt64: DedupTable.Entry] = [:]
        for step in 0..<40_000 {
            // 512 distinct ids: the table stays small and up to three quarters full, so runs form, wrap around the
            // end and are moved back on removal. The growing table is checked at every size it passes through.
            let id = UInt64.random(in: 0..<64, using: &random) | (UInt64.random(in: 0..<8, using: &random) << 40)
            let entry = DedupTable.Entry(payload: random.next(), expiresAt: Int64(step))
            switch random.next() % 4 {
            case 0, 1:
                table.set(id, entry)
                oracle[id] = entry
            case 2:
                let removes = Bool.random(using: &random)
                table.remove(id) { _ in removes }
                if removes { oracle[id] = nil }
            default:
                let seen = table.update(id) { held -> DedupTable.Entry? in
                    defer { held = held == nil ? entry : nil }
                    return held
                }
                #expect(seen == oracle[id])
                oracle[id] = seen == nil ? entry : nil
            }
            if step % 1_499 == 0 {
                // A sweep of a third of the ids, chosen by their entries, in one pass.
                let forgotten = table.removeAll { $0.payload % 3 == 0 }
                #expect(forgotten == oracle.values.count { $0.payload % 3 == 0 })
                oracle = oracle.filter { $0.value.payload % 3 != 0 }
            }
            if step % 997 == 0 || step == 39_999 {
                #expect(table.count == oracle.count)
                for probe in 0..<64 as Range<UInt64> {
                    for high in 0..<8 as Range<UInt64> {
                        let id = probe | high << 40
                        #expect(table[id] == oracle[id], "id \(id) at step \(step)")
                    }
                }
            }
        }
    }

    @Test func aSweepThatLeavesFewIdsShrinksTheTableAndKeepsEveryOneReachable() {
        var table = DedupTable()
        for id in 0..<10_000 as Range<UInt64> { table.set(id &* 0x9E37_79B9, DedupTable.Entry(payload: id, expiresAt: Int64(id))) }
        let full = table.byteCount
        #expect(full == 16_384 * 24)
        #expect(table.removeAll { $0.expiresAt < 9_700 } == 9_700)
        #expect(table.count == 300)
        // 300 ids are at least 3/16 of 1,024 slots, and under 3/16 of 2,048.
        #expect(table.byteCount == 1_024 * 24)
        for id in 0..<10_000 as Range<UInt64> {
            #expect(table[id &* 0x9E37_79B9] == (id < 9_700 ? nil : DedupTable.Entry(payload: id, expiresAt: Int64(id))))
        }
    }

    @Test func tablesWithTheSameEntriesAreEqualWhateverTheOrderTheyCameIn() {
        let entries = (0..<100 as Range<UInt64>).map { ($0 * 16, DedupTable.Entry(payload: $0, expiresAt: Int64($0))) }
        var forward = DedupTable(), backward = DedupTable()
        for (id, entry) in entries { forward.set(id, entry) }
        for (id, entry) in entries.reversed() { backward.set(id, entry) }
        #expect(forward == backward)
        backward.set(0, DedupTable.Entry(payload: 1, expiresAt: 0))
        #expect(forward != backward)
        backward.remove(0) { _ in true }
        #expect(forward != backward)
    }
}
