import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// The in-process route tests' client, which keeps every response it gets: `test(_:_:)` runs a test's requests and
/// then checks each response against docs/openapi.yaml (`scripts/lib/openapi_check.py responses`: its status and
/// content type documented for the operation, its body valid against the schema; a path or method the document
/// does not have answered 404 or 405 with an error body).
struct DocumentedResponses: TestClientProtocol {
    /// The responses a client got.
    final class Log: Sendable {
        let seen = Mutex<[OpenAPIDocumentTests.Seen]>([])
    }

    let client: any TestClientProtocol
    let log: Log

    var port: Int? { client.port }

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
        let path = String(uri.prefix { $0 != "?" })
        // A body sent in a content coding (`Content-Encoding: zstd`) is checked as decoded: an undecodable one fails.
        let body = response.headers[.contentEncoding] == "zstd" ? zstdDecoded(response.body).map { String(buffer: $0) } ?? "undecodable zstd" : String(buffer: response.body)
        let kept = OpenAPIDocumentTests.Seen(method: method.rawValue, path: path, status: response.status.code,
                                             content_type: response.headers[.contentType] ?? "", body: body)
        log.seen.withLock { $0.append(kept) }
        return response
    }

    /// Runs `body` with `application`'s in-process client, then checks every response it got.
    static func test(_ application: some ApplicationProtocol, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let log = Log()
        try await application.test(.router) { client in
            try await body(DocumentedResponses(client: client, log: log))
        }
        let seen = log.seen.withLock { $0 }
        guard !seen.isEmpty else { return }
        let (status, output) = try OpenAPIDocumentTests.check(
            OpenAPIDocumentTests.document, "responses", input: seen.map(\.line).joined(separator: "\n"))
        #expect(status == 0, "responses not as docs/openapi.yaml says:\n\(output.prefix(4_000))")
    }
}
