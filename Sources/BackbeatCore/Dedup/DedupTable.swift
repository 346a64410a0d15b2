/// The table behind a `DedupWindow`: each remembered id with its payload and expiry, found by open addressing on the
/// id itself.
///
/// Ids are already 64-bit hashes (`StableHasher`), the same in every process, so anyone can make ids that share
/// their low bits: the slot is chosen by the id mixed once with a seed of the table's own (`MurmurHash3.fmix`), so
/// that no input crowds one run of slots. A `Dictionary` would hash each id with SipHash and keep keys and values in
/// two arrays. Here one slot holds the
/// id, its payload and its expiry (24 bytes); probing is linear; at most three quarters of the slots are taken; a
/// removal moves the entries after it back into the hole, so no tombstones pile up as ids expire. The table doubles
/// when three quarters full (3/8 full after: 64 bytes an id) and halves as `removeAll` leaves it under 3/16 full.
struct DedupTable: Sendable {
    struct Entry: Equatable, Sendable {
        var payload: UInt64
        /// When the window forgets the id, in seconds of event time: `occurred_at` plus its family's span.
        var expiresAt: Int64
    }

    private struct Slot: Sendable {
        var id: UInt64
        var entry: Entry

        /// Whether the slot holds no id (its expiry is `vacant`).
        var isVacant: Bool { entry.expiresAt == DedupTable.vacant }
    }

    /// The expiry that marks a free slot: no event's `occurred_at` plus span is this far in the past.
    private static let vacant = Int64.min

    /// A power of two long (or empty, before the first id).
    private var slots: [Slot] = []
    /// Ids held.
    private(set) var count = 0
    /// Chosen per table: where an id's slot is cannot be known from outside.
    private let seed = UInt64.random(in: .min ... .max)

    init() {}

    /// Bytes the slots take.
    var byteCount: Int { slots.count * MemoryLayout<Slot>.stride }

    /// What `id` holds, if anything.
    subscript(id: UInt64) -> Entry? {
        guard case (let index, true) = find(id) else { return nil }
        return slots[index].entry
    }

    /// Runs `body` on what `id` holds (nil: nothing) and keeps what it leaves there, with one probe: `body` may fill
    /// the entry, change it or clear it.
    mutating func update<Result>(_ id: UInt64, _ body: (inout Entry?) -> Result) -> Result {
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let (index, found) = find(id)
        var entry = found ? slots[index].entry : nil
        let result = body(&entry)
        switch (entry, found) {
        case (let entry?, true): slots[index].entry = entry
        case (let entry?, false):
            precondition(entry.expiresAt != Self.vacant, "an expiry of Int64.min cannot be remembered")
            slots[index] = Slot(id: id, entry: entry)
            count += 1
        case (nil, true): remove(at: index)
        case (nil, false): break
        }
        return result
    }

    /// Remembers `entry` for `id`, in place of what it held.
    mutating func set(_ id: UInt64, _ entry: Entry) {
        update(id) { $0 = entry }
    }

    /// Forgets `id` if `shouldForget` says so of what it holds.
    mutating func remove(_ id: UInt64, where shouldForget: (Entry) -> Bool) {
        guard case (let index, true) = find(id), shouldForget(slots[index].entry) else { return }
        remove(at: index)
    }

    /// Forgets every id whose entry `shouldForget` says so of, in one pass over the slots (`shouldForget` may see an
    /// entry twice), then halves the table while it is under 3/16 full. Answers how many were forgotten.
    @discardableResult
    mutating func removeAll(where shouldForget: (Entry) -> Bool) -> Int {
        let before = count
        var index = 0
        while index < slots.count {
            // A removal shifts a later entry into this slot: it is looked at before moving on.
            if !slots[index].isVacant && shouldForget(slots[index].entry) {
                remove(at: index)
            } else {
                index += 1
            }
        }
        var size = slots.count
        while size > 16 && count * 16 < size * 3 { size /= 2 }
        if size < slots.count { resize(to: size) }
        return before - count
    }

    /// Calls `body` with each entry held.
    func forEachEntry(_ body: (Entry) -> Void) {
        for slot in slots where !slot.isVacant { body(slot.entry) }
    }

    /// The slot holding `id`, or the free slot where it would go.
    private func find(_ id: UInt64) -> (index: Int, found: Bool) {
        guard !slots.isEmpty else { return (0, false) }
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var index = home(of: id, mask: mask)
            while !slots[index].isVacant {
                if slots[index].id == id { return (index, true) }
                index = (index + 1) & mask
            }
            return (index, false)
        }
    }

    /// The slot where probing for `id` starts.
    private func home(of id: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: MurmurHash3.fmix(id ^ seed)) & mask
    }

    /// Empties the slot at `index` and moves each entry of the run after it back into the hole when that is no
    /// earlier than its own home slot: every id stays reachable from its home without tombstones.
    private mutating func remove(at index: Int) {
        let mask = slots.count - 1
        var hole = index
        var next = (hole + 1) & mask
        while !slots[next].isVacant {
            let home = home(of: slots[next].id, mask: mask)
            // The hole lies on the way from its home to where it sits: it may move there.
            if (next - home) & mask >= (next - hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole].entry.expiresAt = Self.vacant
        count -= 1
    }

    /// Twice the slots (16 at first).
    private mutating func grow() {
        resize(to: max(16, slots.count * 2))
    }

    /// `size` slots (a power of two with room for every id), every id placed again.
    private mutating func resize(to size: Int) {
        let old = slots
        slots = Array(repeating: Slot(id: 0, entry: Entry(payload: 0, expiresAt: Self.vacant)), count: size)
        for slot in old where !slot.isVacant {
            slots[find(slot.id).index] = slot
        }
    }
}

extension DedupTable: Equatable {
    /// The same ids with the same entries, wherever their slots are.
    static func == (lhs: DedupTable, rhs: DedupTable) -> Bool {
        lhs.count == rhs.count && lhs.slots.allSatisfy { $0.isVacant || rhs[$0.id] == $0.entry }
    }
}
