#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        bytes.withUnsafeBytes { buffer in
            var start = 0
            while start <= end, let found = memchr(buffer.baseAddress! + start, Int32(UInt8(ascii: "\n")), end + 1 - start) {
                let newline = buffer.baseAddress!.distance(to: UnsafeRawPointer(found))
                lines.append(start..<newline)
                start = newline + 1
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
