import Synchronization

/// A count shared by every copy of the value holding it (a struct's copies, concurrent tasks): what the tests read
/// to check that something happened exactly as often as it should.
public final class SharedCount: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    public func add(_ amount: Int = 1) {
        count.add(amount, ordering: .relaxed)
    }

    public var value: Int { count.load(ordering: .relaxed) }
}
