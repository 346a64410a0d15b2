/// Complete lines read from an input: one buffer and each line's range in it (without its `\n`).
public struct LineBlock: Sendable {
    public let bytes: [UInt8]
    public let lines: [Range<Int>]

    public init(bytes: [UInt8], lines: [Range<Int>]) {
        self.bytes = bytes
        self.lines = lines
    }

    /// The lines of `bytes` that end at or before the newline at `end` (which must hold one).
    init(bytes: [UInt8], linesUpTo end: Int) {
        var lines: [Range<Int>] = []
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            for index in 0...end where buffer[index] == UInt8(ascii: "\n") {
                lines.append(start..<index)
                start = index + 1
            }
        }
        self.init(bytes: bytes, lines: lines)
    }

    /// Calls `body` with each line in order.
    public func forEachLine(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { buffer in
            for line in lines { try body(UnsafeRawBufferPointer(rebasing: buffer[line])) }
        }
    }
}
