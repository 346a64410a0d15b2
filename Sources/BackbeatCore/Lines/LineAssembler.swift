/// Cuts a stream of byte chunks into lines (without their `\n`), carrying a partial line over to the next chunk, so
/// that files of any size are read in constant memory.
public struct LineAssembler: Sendable {
    private var partial: [UInt8] = []

    public init() {}

    /// The lines `chunk` completes, as one block: the partial line carried over joined with the chunk's complete lines.
    public mutating func block(_ chunk: [UInt8]) -> LineBlock {
        guard let last = chunk.lastIndex(of: UInt8(ascii: "\n")) else {
            partial.append(contentsOf: chunk)
            return LineBlock(bytes: [], lines: [])
        }
        let block: LineBlock
        if partial.isEmpty {
            block = LineBlock(bytes: chunk, linesUpTo: last)
        } else {
            var bytes = partial
            bytes.append(contentsOf: chunk[...last])
            partial.removeAll(keepingCapacity: true)
            block = LineBlock(bytes: bytes, linesUpTo: bytes.count - 1)
        }
        partial.append(contentsOf: chunk[(last + 1)...])
        return block
    }

    /// The last line if the stream did not end with `\n`.
    public mutating func finishBlock() -> LineBlock? {
        guard !partial.isEmpty else { return nil }
        defer { partial = [] }
        return LineBlock(bytes: partial, lines: [0..<partial.count])
    }

    /// Bytes of an incomplete line held back.
    public var pendingBytes: Int { partial.count }
}
