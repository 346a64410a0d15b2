import Synchronization

/// One metric's handles (a counter, a timer, or the handles of several metrics that share labels), one per set of
/// label values, made on first use. A lookup hashes the typed `Labels` once under a lock: what the metrics recorded
/// on every request use, where a label dictionary sorted into a key would cost more than the request's own work.
final class LabeledMetric<Labels: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let handles = Mutex<[Labels: Handle]>([:])
    private let make: @Sendable (Labels) -> Handle

    init(make: @escaping @Sendable (Labels) -> Handle) {
        self.make = make
    }

    subscript(labels: Labels) -> Handle {
        handles.withLock { handles in
            if let existing = handles[labels] { return existing }
            let made = make(labels)
            handles[labels] = made
            return made
        }
    }
}
