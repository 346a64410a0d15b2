import BackbeatCore
import Testing

/// Cutting inputs into lines: every way of splitting a text into chunks gives the same lines.
@Suite struct LineAssemblerTests {
    static let text = "first\n\nthird line\r\nfourth é\nlast without newline"

    func lines(of chunks: [[UInt8]]) -> [String] {
        var assembler = LineAssembler()
        var lines: [String] = []
        func collect(_ block: LineBlock) {
            block.forEachLine { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        for chunk in chunks { collect(assembler.block(chunk)) }
        if let last = assembler.finishBlock() { collect(last) }
        #expect(assembler.pendingBytes == 0)
        return lines
    }

    @Test(arguments: [1, 2, 3, 5, 7, 11, 64])
    func everyChunkSizeGivesTheSameLines(_ size: Int) {
        let bytes = Array(Self.text.utf8)
        let chunks = stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
        #expect(lines(of: chunks) == ["first", "", "third line\r", "fourth é", "last without newline"])
    }

    @Test func aChunkWithoutNewlineIsHeldBack() {
        var assembler = LineAssembler()
        #expect(assembler.block(Array("no end".utf8)).lines.isEmpty)
        #expect(assembler.pendingBytes == 6)
        let block = assembler.block(Array(" yet\nnext".utf8))
        var lines: [String] = []
        block.forEachLine { lines.append(String(decoding: $0, as: UTF8.self)) }
        #expect(lines == ["no end yet"])
        #expect(assembler.pendingBytes == 4)
    }

    @Test func aTextEndingInNewlineHasNoLastBlock() {
        var assembler = LineAssembler()
        #expect(assembler.block(Array("a\nb\n".utf8)).lines.count == 2)
        #expect(assembler.finishBlock() == nil)
    }
}
