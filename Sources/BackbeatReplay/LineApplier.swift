import BackbeatCore
import BackbeatStore

/// Applies the lines of one input and flushes them to PostgreSQL in batches.
///
/// A line is handled in two steps: `decoder` works out what the line alone says (the event it holds, or why it is
/// rejected), and runs ahead on another core; `apply` then counts the decoded lines in input order.
protocol LineApplier {
    associatedtype Decoded: Sendable
    /// Lines applied since the last flush.
    var linesSinceFlush: Int { get }
    /// Decodes one line; `number` counts the input's lines from 0.
    var decoder: @Sendable (_ line: UnsafeRawBufferPointer, _ number: Int64) -> Decoded { get }
    /// Reads the next block of lines, before any of them is applied.
    mutating func read(_ block: LineBlock) throws
    /// Applies the next line of the input, decoded by `decoder`.
    mutating func apply(_ decoded: Decoded, line: UnsafeRawBufferPointer, report: inout ReplayReport) throws
    /// The input ended (undamaged) after the last block read.
    func inputEnded() throws
    /// Takes what was applied since the last flush: the write that stores it with the input's position in one
    /// transaction (nil when there is nothing to write).
    mutating func takeWrite() -> (@Sendable (Store) async throws -> Void)?
    /// Completes `report` with what was still being worked out when the input's lines began (its identity).
    func complete(_ report: inout ReplayReport) async throws
}

extension LineApplier {
    mutating func read(_ block: LineBlock) throws {}
    func inputEnded() throws {}
    func complete(_ report: inout ReplayReport) async throws {}
}

/// A block of lines with each line decoded.
struct DecodedBlock<Decoded: Sendable>: Sendable {
    let block: LineBlock
    let decoded: [Decoded]

    /// Decodes every line of `block`, whose first line is the input's line `first` (counting from 0).
    init(_ block: LineBlock, first: Int64, decoder: @Sendable (UnsafeRawBufferPointer, Int64) -> Decoded) {
        var decoded: [Decoded] = []
        decoded.reserveCapacity(block.lines.count)
        var number = first
        block.forEachLine { line in
            decoded.append(decoder(line, number))
            number += 1
        }
        self.block = block
        self.decoded = decoded
    }
}
