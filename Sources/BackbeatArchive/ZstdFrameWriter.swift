import CZstd
import Foundation

/// Writes bytes to a file as a sequence of independent zstd frames (one per buffered megabyte): a valid `.zst`
/// stream that `zstd -d` and `InputReader` read whole.
public final class ZstdFrameWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private let level: Int32

    public init(handle: FileHandle, level: Int32 = 3) {
        self.handle = handle
        self.level = level
    }

    public func write(_ bytes: [UInt8]) throws {
        buffer += bytes
        if buffer.count >= 1 << 20 { try flush() }
    }

    /// Compresses and writes what is buffered as one frame.
    public func flush() throws {
        guard !buffer.isEmpty else { return }
        handle.write(Data(try Self.frame(of: buffer, level: level)))
        buffer.removeAll(keepingCapacity: true)
    }

    /// `bytes` compressed as one complete zstd frame.
    public static func frame(of bytes: [UInt8], level: Int32 = 3) throws -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let size = bytes.withUnsafeBytes { source in
            frame.withUnsafeMutableBytes { target in
                ZSTD_compress(target.baseAddress, target.count, source.baseAddress, source.count, level)
            }
        }
        guard ZSTD_isError(size) == 0 else {
            throw ArchiveError(path: "", position: 0, "zstd compression failed: \(String(cString: ZSTD_getErrorName(size)))")
        }
        frame.removeSubrange(size...)
        return frame
    }
}
