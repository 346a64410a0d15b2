import CZstd
import NIOCore

/// `frame` decoded by libzstd alone, to the size its header declares; nil when it is not one whole zstd frame.
func zstdDecoded(_ frame: ByteBuffer) -> ByteBuffer? {
    frame.withUnsafeReadableBytes { source -> ByteBuffer? in
        let size = ZSTD_getFrameContentSize(source.baseAddress, source.count)
        guard size > 0, size < UInt64(1 << 30) else { return nil }
        var output = ByteBuffer()
        let written = output.writeWithUnsafeMutableBytes(minimumWritableBytes: Int(size)) { target in
            let count = ZSTD_decompress(target.baseAddress, Int(size), source.baseAddress, source.count)
            return ZSTD_isError(count) == 0 && count == Int(size) ? count : 0
        }
        return written == Int(size) ? output : nil
    }
}
