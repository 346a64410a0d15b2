import BackbeatCore
import BackbeatStore

/// Applies the lines of one input and flushes them to PostgreSQL in batches.
protocol LineApplier {
    /// Lines handled since the last flush.
    var linesSinceFlush: Int { get }
    mutating func handle(_ line: UnsafeRawBufferPointer, report: inout ReplayReport) throws
    /// Takes what was handled since the last flush: the write that stores it with the input's position in one
    /// transaction (nil when there is nothing to write).
    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)?
}
