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

    /// `bytes` compressed as one complete zstd frame with a content checksum, so that damage is detected at the
    /// frame it hits.
    public static func frame(of bytes: [UInt8], level: Int32 = 3) throws -> [UInt8] {
        // Owned here, freed on return.
        guard let context = ZSTD_createCCtx() else { throw ArchiveError(path: "", position: 0, "zstd: cannot create a compression context") }
        defer { ZSTD_freeCCtx(context) }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        var frame = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let size = bytes.withUnsafeBytes { source in
            frame.withUnsafeMutableBytes { target in
                ZSTD_compress2(context, target.baseAddress, target.count, source.baseAddress, source.count)
            }
        }
        guard ZSTD_isError(size) == 0 else {
            throw ArchiveError(path: "", position: 0, "zstd compression failed: \(String(cString: ZSTD_getErrorName(size)))")
        }
        frame.removeSubrange(size...)
        return frame
    }
}
