/// Values by key, bounded by the bytes they are counted for: storing past `capacityBytes` drops the entries stored
/// earliest first. A value counted for more than a quarter of the capacity is not stored. Not synchronized: its
/// owner holds it under a lock.
struct OldestFirstEntries<Key: Hashable, Value> {
    let capacityBytes: Int
    private var entries: [Key: (value: Value, bytes: Int)] = [:]
    /// Keys in the order they were first stored (from `orderStart` on).
    private var order: [Key] = []
    private var orderStart = 0
    private(set) var bytes = 0

    init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
    }

    subscript(key: Key) -> Value? {
        entries[key]?.value
    }

    /// Stores `value` under `key`, counted for `bytes`, and drops the oldest entries while the total is over
    /// capacity.
    mutating func store(_ value: Value, for key: Key, bytes size: Int) {
        guard size <= capacityBytes / 4 else { return }
        if let old = entries.updateValue((value, size), forKey: key) {
            bytes -= old.bytes
        } else {
            order.append(key)
        }
        bytes += size
        while bytes > capacityBytes, orderStart < order.count {
            let oldest = order[orderStart]
            orderStart += 1
            if let removed = entries.removeValue(forKey: oldest) { bytes -= removed.bytes }
        }
        if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }
}
