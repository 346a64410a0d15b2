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

    /// `body` answered to `request`: its zstd frame as it is kept (`Content-Encoding: zstd`) when the body is kept
    /// compressed and the request accepts zstd, else the body itself. The answer varies by `Accept-Encoding`.
    static func response(to request: Request, _ body: AnswerBody) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .vary: "Accept-Encoding"]
        let bytes: ByteBuffer
        if body.isCompressed, AcceptEncoding.accepts("zstd", in: request.headers[values: .acceptEncoding]) {
            headers[.contentEncoding] = "zstd"
            bytes = body.bytes
        } else {
            guard let plain = body.plain else {
                throw APIError(.internalServerError, .internalError, message: "a kept answer could not be decompressed")
            }
            bytes = plain
        }
        headers[.contentLength] = String(bytes.readableBytes)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: bytes))
    }
}

extension Request {
    /// What names an artist endpoint's answer in `AnswerCache`: the path and the query string as sent.
    var answerKey: String { uri.description }
}
