import CZstd
import NIOCore
import Synchronization

/// An answer's body as `AnswerCache` keeps it and a route serves it: compressed with zstd (level 1) when that saves
/// at least a quarter of a body of `compressingFrom` bytes or more, as it is otherwise. Dashboard answers are
/// repetitive JSON (a social series of 28 days is some 100 KB and compresses about 15 times), so the cache holds many
/// more of them, and a client that accepts zstd (`Content-Encoding: zstd`, RFC 9659) is sent the compressed bytes as
/// they are; for any other client a hit decompresses (some 35 µs for 100 KB), far less than making the answer again.
struct AnswerBody: Sendable {
    static let compressingFrom = 4_096

    /// The body, or its zstd frame when `plainCount` is set.
    let bytes: ByteBuffer
    /// The body's size when `bytes` is compressed; nil when `bytes` is the body.
    private let plainCount: Int?

    /// `body`, compressed when that is worth it.
    init(compressing body: ByteBuffer) {
        if body.readableBytes >= Self.compressingFrom, let compressed = ZstdContexts.shared.compress(body),
           compressed.readableBytes <= body.readableBytes / 4 * 3 {
            bytes = compressed
            plainCount = body.readableBytes
        } else {
            bytes = body
            plainCount = nil
        }
    }

    /// `body` as it is.
    init(plain body: ByteBuffer) {
        bytes = body
        plainCount = nil
    }

    /// The body as it was given; nil when the compressed bytes do not decompress to it (never expected).
    var plain: ByteBuffer? {
        guard let plainCount else { return bytes }
        return ZstdContexts.shared.decompress(bytes, count: plainCount)
    }

    /// Bytes held.
    var keptBytes: Int { bytes.readableBytes }

    /// Whether `bytes` is a zstd frame of the body.
    var isCompressed: Bool { plainCount != nil }
}

/// zstd contexts reused across answers: a context's workspace is large enough that making one per body would cost
/// more than the work it does.
private final class ZstdContexts: Sendable {
    static let shared = ZstdContexts()

    /// A context owned by whoever holds it (created and freed here only).
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let compressors = Mutex<[Context]>([])
    private let decompressors = Mutex<[Context]>([])

    func compress(_ body: ByteBuffer) -> ByteBuffer? {
        guard let context = compressors.withLock({ $0.popLast() }) ?? ZSTD_createCCtx().map(Context.init) else { return nil }
        defer { compressors.withLock { $0.append(context) } }
        var output = ByteBuffer()
        let bound = ZSTD_compressBound(body.readableBytes)
        let written = body.withUnsafeReadableBytes { source in
            output.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { target in
                let size = ZSTD_compressCCtx(context.pointer, target.baseAddress, target.count, source.baseAddress, source.count, 1)
                return ZSTD_isError(size) == 0 ? size : 0
            }
        }
        return written > 0 ? output : nil
    }

    func decompress(_ compressed: ByteBuffer, count: Int) -> ByteBuffer? {
        guard let context = decompressors.withLock({ $0.popLast() }) ?? ZSTD_createDCtx().map(Context.init) else { return nil }
        defer { decompressors.withLock { $0.append(context) } }
        var output = ByteBuffer()
        var complete = false
        compressed.withUnsafeReadableBytes { source in
            output.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { target in
                let size = ZSTD_decompressDCtx(context.pointer, target.baseAddress, count, source.baseAddress, source.count)
                complete = ZSTD_isError(size) == 0 && size == count
                return complete ? size : 0
            }
        }
        return complete ? output : nil
    }
}
