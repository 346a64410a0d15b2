import CZstd
import Foundation

/// Reads an input file (or stdin) chunk by chunk, decompressing zstd on the fly when the data starts with the zstd
/// magic number, so memory stays constant whatever the size.
public final class InputReader {
    public let path: String
    /// Size of the file as stored (nil for stdin).
    public let storedSize: Int?
    /// Bytes read from the file as stored so far.
    public private(set) var storedBytesRead = 0

    private let handle: FileHandle
    private var decompressor: OpaquePointer?
    private var input: [UInt8] = []
    private var inputPosition = 0
    private var frameOpen = false
    private var sawEOF = false
    private static let chunkSize = 1 << 20
    /// Most decompressed bytes of one frame held back before they are handed out unverified.
    private static let heldBackLimit = 32 << 20

    /// Opens `path` ("-" for stdin).
    public init(path: String) throws {
        self.path = path
        if path == "-" {
            handle = .standardInput
            storedSize = nil
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else { throw ArchiveError(path: path, position: 0, "cannot open") }
            handle = opened
            storedSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        }
        try fill()
        if input.count >= 4 && input[0] == 0x28 && input[1] == 0xB5 && input[2] == 0x2F && input[3] == 0xFD {
            // Owned here, freed in deinit.
            decompressor = ZSTD_createDStream()
            ZSTD_initDStream(decompressor)
        }
    }

    deinit {
        if let decompressor { ZSTD_freeDStream(decompressor) }
        if path != "-" { try? handle.close() }
    }

    /// Whether the input is zstd-compressed.
    public var isCompressed: Bool { decompressor != nil }

    /// The next chunk of (decompressed) bytes, or nil at the end.
    /// - Throws: `ArchiveError` for a read error, corrupt compressed data or a truncated last frame.
    public func next() throws -> [UInt8]? {
        guard let decompressor else {
            if inputPosition >= input.count { try fill() }
            guard inputPosition < input.count else { return nil }
            defer { inputPosition = input.count }
            return Array(input[inputPosition...])
        }
        // A frame's output is held back until the frame ends (and its checksum, when it has one, is verified), so
        // the lines of a damaged frame are never handed out; frames larger than `heldBackLimit` are released early.
        // The output is decompressed straight into the array handed out, sized by the frame's header when it says.
        var frame: [UInt8] = []
        var outputFull = false
        while true {
            // A full output buffer means the decompressor may hold more output for the input it has: drain it first.
            if inputPosition >= input.count && !outputFull {
                try fill()
                if inputPosition >= input.count {
                    if frameOpen { throw ArchiveError(path: path, position: storedBytesRead, "truncated zstd data (the last frame is incomplete)") }
                    return frame.isEmpty ? nil : frame
                }
            }
            if !frameOpen && frame.isEmpty { frame.reserveCapacity(frameSizeHint() + Self.spareOutput) }
            let room = Swift.max(frame.capacity - frame.count, Self.spareOutput)
            let start = frame.count
            frame.append(contentsOf: repeatElement(0, count: room))
            let consumedBefore = inputPosition
            var produced = 0
            let hint = input.withUnsafeBytes { source in
                frame.withUnsafeMutableBytes { target in
                    var inBuffer = ZSTD_inBuffer(src: source.baseAddress! + inputPosition, size: source.count - inputPosition, pos: 0)
                    var outBuffer = ZSTD_outBuffer(dst: target.baseAddress! + start, size: room, pos: 0)
                    let result = ZSTD_decompressStream(decompressor, &outBuffer, &inBuffer)
                    inputPosition += inBuffer.pos
                    produced = outBuffer.pos
                    return result
                }
            }
            frame.removeLast(room - produced)
            if ZSTD_isError(hint) != 0 {
                let position = storedBytesRead - (input.count - consumedBefore)
                throw ArchiveError(path: path, position: position, "corrupt zstd data (\(String(cString: ZSTD_getErrorName(hint))))")
            }
            outputFull = produced == room
            frameOpen = hint != 0
            if (!frameOpen && !frame.isEmpty) || frame.count >= Self.heldBackLimit { return frame }
        }
    }

    /// Output room kept beyond a frame's announced size (the call that verifies its end writes nothing more).
    private static let spareOutput = 1 << 16

    /// The decompressed size the next frame's header announces (when the input holds its header and it says, and
    /// within `heldBackLimit`), else `chunkSize`.
    private func frameSizeHint() -> Int {
        let announced = input.withUnsafeBytes { source in
            ZSTD_getFrameContentSize(source.baseAddress! + inputPosition, source.count - inputPosition)
        }
        // Unknown and error are the two largest values.
        guard announced < UInt64.max - 1, announced <= UInt64(Self.heldBackLimit) else { return Self.chunkSize }
        return Int(announced)
    }

    private func fill() throws {
        guard !sawEOF else {
            input = []
            inputPosition = 0
            return
        }
        let data: Data?
        do {
            data = try handle.read(upToCount: Self.chunkSize)
        } catch {
            throw ArchiveError(path: path, position: storedBytesRead, "read failed: \(error)")
        }
        input = data.map { [UInt8]($0) } ?? []
        inputPosition = 0
        if input.isEmpty { sawEOF = true }
        storedBytesRead += input.count
    }
}
