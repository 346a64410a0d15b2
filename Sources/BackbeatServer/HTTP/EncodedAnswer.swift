import Foundation
import Hummingbird

/// An answer encoded once, as Hummingbird's JSON encoder would answer it, so that it can be kept and served again
/// as bytes (`AnswerCache`).
enum EncodedAnswer {
    static func json(_ value: some Encodable) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONEncoder().encode(value))
    }

    /// A dashboard answer, written without Foundation's encoder.
    static func written(_ value: some JSONWritable) -> ByteBuffer {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.buffer
    }

    static func response(_ body: ByteBuffer) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes)],
            body: .init(byteBuffer: body))
    }
}

extension Request {
    /// What names an artist endpoint's answer in `AnswerCache`: the path and the query string as sent.
    var answerKey: String { uri.description }
}
