/// Cuts a stream of byte chunks into lines (without their `\n`), carrying a partial line over to the next chunk, so
/// that files of any size are read in constant memory.
public struct LineAssembler: Sendable {
    private var partial: [UInt8] = []

    public init() {}

    /// Calls `body` with every line that `chunk` completes.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var start = 0
        while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if partial.isEmpty {
                try body(UnsafeRawBufferPointer(rebasing: chunk[start..<newline]))
            } else {
                partial.append(contentsOf: chunk[start..<newline])
                try partial.withUnsafeBytes { try body($0) }
                partial.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        partial.append(contentsOf: chunk[start...])
    }

    /// Calls `body` with the last line if the stream did not end with `\n`.
    public mutating func finish(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard !partial.isEmpty else { return }
        try partial.withUnsafeBytes { try body($0) }
        partial.removeAll()
    }

    /// Bytes of an incomplete line held back.
    public var pendingBytes: Int { partial.count }
}
