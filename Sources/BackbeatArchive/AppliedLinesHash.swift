import BackbeatCore
import CXXHash

/// The hash of a plain input's lines read so far, each with the newline that ends it: stored with the input's
/// position at every write, so that a later run can tell whether the lines it would skip are the ones that were
/// applied.
///
/// Given the hash stored with a position (`expected`), it checks the input's lines against it when it reaches that
/// position, before any line past it is applied: a mismatch means another input with the same head
/// (`InputIdentity`), or this input edited, and must not resume there.
///
/// The hash is XXH3's 128-bit one: it guards against inputs that differ by accident, not by design (whoever can
/// write an input can write any event), and it costs a few milliseconds per gigabyte where SHA-256 cost a tenth of a
/// second per million events on the replay's critical path (measured: docs/performance.md).
public final class AppliedLinesHash {
    private let state: OpaquePointer
    /// Lines hashed so far.
    public private(set) var lines: Int64 = 0
    private var expected: (lines: Int64, hash: String)?

    /// Hashes from the input's first line; `expected`, when given, is checked once `lines` lines are hashed.
    public init(expecting expected: (lines: Int64, hash: String)? = nil) {
        // Owned here, freed in deinit.
        state = XXH3_createState()
        XXH3_128bits_reset(state)
        self.expected = expected.flatMap { $0.lines > 0 ? $0 : nil }
    }

    deinit {
        XXH3_freeState(state)
    }

    /// The hash of the lines so far, as 32 hex digits.
    public var value: String {
        let digest = XXH3_128bits_digest(state)
        return InputIdentity.hex(withUnsafeBytes(of: digest.high64.bigEndian) { Array($0) } + withUnsafeBytes(of: digest.low64.bigEndian) { Array($0) })
    }

    /// Adds the next block of lines. Throws before hashing past the expected position when the lines up to it are
    /// not the ones applied.
    public func add(_ block: LineBlock) throws(Mismatch) {
        guard !block.lines.isEmpty else { return }
        var first = 0
        if let expected, expected.lines <= lines + Int64(block.lines.count) {
            let upTo = Int(expected.lines - lines)
            hash(block, lines: 0..<upTo)
            guard value == expected.hash else { throw Mismatch(lines: expected.lines) }
            self.expected = nil
            first = upTo
        }
        hash(block, lines: first..<block.lines.count)
    }

    /// Checks, at the input's end, that the expected position was reached.
    public func finish() throws(Mismatch) {
        if let expected { throw Mismatch(lines: expected.lines) }
    }

    /// Hashes `block`'s lines `range` (consecutive in its bytes), each with its newline when it has one.
    private func hash(_ block: LineBlock, lines range: Range<Int>) {
        guard !range.isEmpty else { return }
        let start = block.lines[range.lowerBound].lowerBound
        let end = min(block.lines[range.upperBound - 1].upperBound + 1, block.bytes.count)
        block.bytes.withUnsafeBytes { bytes in _ = XXH3_128bits_update(state, bytes.baseAddress! + start, end - start) }
        lines += Int64(range.count)
    }

    /// The input's first `lines` lines are not the ones applied under its name (or it has fewer).
    public struct Mismatch: Error, Sendable {
        public let lines: Int64
    }
}
