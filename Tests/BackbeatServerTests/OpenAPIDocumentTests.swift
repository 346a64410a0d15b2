@testable import BackbeatServer
import BackbeatCore
import BackbeatStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// docs/openapi.yaml kept true to the service, by `scripts/lib/openapi_check.py` (Python's jsonschema and PyYAML):
/// the document lints (objects list `required` and refuse other properties, no `default` response), the router's
/// routes are its operations, the binary serves it byte for byte without a token, and the responses of every route
/// (successes and errors, admin and artist tokens) are documented and validate against their schemas. The checker
/// is shown to fail on a document missing a route and on a response with a field too many.
@Suite(.serialized) struct OpenAPIDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let document = root.appendingPathComponent("docs/openapi.yaml")

    /// A response as the checker reads it (`path`: the route's template).
    struct Seen: Codable, Sendable {
        var method: String
        var path: String
        var status: Int
        var content_type: String
        var body: String

        var line: String { String(decoding: try! JSONEncoder().encode(self), as: UTF8.self) }
    }

    @Test func theDocumentLints() throws {
        let (status, output) = try Self.check(Self.document, "lint")
        #expect(status == 0, "\(output)")
    }

    @Test func theBinaryServesTheDocumentAsWritten() async throws {
        let written = try Data(contentsOf: Self.document)
        #expect(Data(OpenAPIRoute<BackbeatRequestContext>.document) == written)
        try await RouteTests.withPopulatedStore([]) { store, _ in
            let router = buildRouter(store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, answerCache: nil)
            try await DocumentedResponses.test(Application(router: router)) { client in
                try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/yaml")
                    #expect(Data(buffer: response.body) == written)
                }
            }
        }
    }

    @Test func theRoutesAreTheDocumentsOperations() async throws {
        try await RouteTests.withPopulatedStore([]) { store, _ in
            let router = buildRouter(store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, answerCache: nil)
            let routes = router.routes.map { "\($0.method.rawValue) \($0.path)" }.joined(separator: "\n")
            #expect(routes.contains("GET /v1/artists/{artist_id}/streams"), "\(routes)")
            let (status, output) = try Self.check(Self.document, "routes", input: routes)
            #expect(status == 0, "\(output)")

            // The checker fails on a document without one of the routes.
            let text = try String(contentsOf: Self.document, encoding: .utf8)
            let start = try #require(text.range(of: "  /v1/artists/{artist_id}/platforms:\n"))
            let end = try #require(text.range(of: "  /v1/artists/{artist_id}/demographics:\n"))
            let shorter = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString).yaml")
            try text.replacingCharacters(in: start.lowerBound..<end.lowerBound, with: "").write(to: shorter, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: shorter) }
            let (missing, said) = try Self.check(shorter, "routes", input: routes)
            #expect(missing == 1 && said.contains("routed, not in the document: GET /v1/artists/{artist_id}/platforms"), "\(said)")
        }
    }

    @Test func everyRoutesResponsesAreDocumented() async throws {
        let events = RouteTests.events()
        try await RouteTests.withPopulatedStore(events) { store, artistToken in
            let router = buildRouter(store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken,
                                     artistRequestsPerSecond: 0, answerCache: nil)
            let recorded = Mutex<[Seen]>([])
            try await Application(router: router).test(.router) { client in
                /// Asks `uri` (the route's template `path`) and records the response.
                func ask(_ path: String, _ uri: String, _ method: HTTPRequest.Method = .get, token: String? = RouteTests.adminToken, body: String? = nil) async throws {
                    var headers: HTTPFields = [:]
                    if let token { headers[.authorization] = "Bearer \(token)" }
                    if body != nil { headers[.contentType] = "application/json" }
                    try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) { response in
                        let seen = Seen(method: method.rawValue, path: path, status: response.status.code,
                                        content_type: response.headers[.contentType] ?? "", body: String(buffer: response.body))
                        recorded.withLock { $0.append(seen) }
                    }
                }
                let artist = "/v1/artists/{artist_id}"
                for (route, query) in RouteTests.artistRoutes {
                    let path = "\(artist)/\(route)", uri = "/v1/artists/\(RouteTests.artist)/\(route)"
                    try await ask(path, "\(uri)?\(query)")
                    try await ask(path, "\(uri)?\(query)", token: artistToken)
                    try await ask(path, "/v1/artists/artist-0002/\(route)?\(query)", token: artistToken)
                    try await ask(path, "\(uri)?\(query)", token: nil)
                    try await ask(path, "\(uri)?\(query)&granulariy=week")
                    try await ask(path, route == "summary" ? "\(uri)?as_of=tomorrow" : "\(uri)?from=2026-10-11&to=2026-10-01")
                }
                for query in ["granularity=hour&platform=spotify", "granularity=week&track_id=\(RouteTests.artist):track-01", "granularity=month&country=SE&gender=female", "granularity=all&age_range=25-34"] {
                    try await ask("\(artist)/streams", "/v1/artists/\(RouteTests.artist)/streams?\(RouteTests.range)&\(query)")
                }
                try await ask("\(artist)/summary", "/v1/artists/\(RouteTests.artist)/summary")
                try await ask("/v1/artists", "/v1/artists")
                try await ask("/v1/artists", "/v1/artists?limit=1", token: artistToken)
                try await ask("/v1/artists", "/v1/artists?limit=0")
                let queries = [
                    #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-08","granularity":"day","group_by":["artist_id","country"],"filters":{"gender":["female","male"]},"order_by":{"metric":"skips","direction":"desc"},"limit":4}"#,
                    #"{"dataset":"revenue","from":"2026-10-01","to":"2026-10-08","group_by":["currency","source","platform","track_id"]}"#,
                    #"{"dataset":"social","from":"2026-10-01T00:00:00Z","to":"2026-10-08T00:00:00Z","granularity":"hour","group_by":["platform","action"],"limit":10}"#,
                    #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-08","group_by":["age_range","gender","track_id","platform"]}"#,
                    #"{"dataset":"revenue","from":"2026-10-01","to":"2026-10-08"}"#,
                    #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-08","order_by":{"metrics":"streams"}}"#,
                    #"{"dataset":"plays","from":"2026-10-01","to":"2026-10-08"}"#,
                    #"[1, 2]"#,
                ]
                for query in queries { try await ask("/v1/query", "/v1/query", .post, body: query) }
                try await ask("/v1/query", "/v1/query", .post, token: artistToken, body: queries[0])
                try await ask("/v1/query", "/v1/query", .post, body: String(repeating: " ", count: 70_000) + queries[0])
                let zone = "/v1/artists/{artist_id}/zone", zoneURI = "/v1/artists/\(RouteTests.artist)/zone"
                try await ask(zone, zoneURI)
                try await ask(zone, zoneURI, token: artistToken)
                try await ask(zone, zoneURI, .put, body: #"{"zone":"Pacific/Chatham"}"#)
                try await ask(zone, zoneURI, .put, body: #"{"zone":"Mars/Olympus_Mons"}"#)
                try await ask(zone, zoneURI, .put, body: #"{"zone":5}"#)
                try await ask(zone, zoneURI, .put, token: artistToken, body: #"{"zone":"UTC"}"#)
                try await ask(zone, zoneURI, .put, body: #"{"zone":""#)
                try await ask(zone, zoneURI, .put, body: String(repeating: " ", count: 70_000) + #"{"zone":"UTC"}"#)
                try await ask("/v1/memory", "/v1/memory")
                try await ask("/v1/memory", "/v1/memory", token: artistToken)
                try await ask("/v1/ingest", "/v1/ingest")
                try await ask("/v1/ingest", "/v1/ingest", token: artistToken)
                try await ask("/v1/ingest", "/v1/ingest?verbose=1")
                try await ask("/healthz", "/healthz", token: nil)
                try await ask("/readyz", "/readyz", token: nil)
                try await ask("/metrics", "/metrics", token: nil)
                try await ask("/openapi.yaml", "/openapi.yaml", token: nil)
            }
            let seen = recorded.withLock { $0 }
            let statuses = Set(seen.map(\.status))
            #expect(statuses.isSuperset(of: [200, 400, 401, 403, 413]), "\(statuses.sorted())")
            let (status, output) = try Self.check(Self.document, "responses", input: seen.map(\.line).joined(separator: "\n"))
            #expect(status == 0, "\(output)")

            // The checker fails on a response with a field the document does not have.
            let platforms = try #require(seen.first { $0.path == "/v1/artists/{artist_id}/platforms" && $0.status == 200 })
            var extra = platforms
            extra.body = platforms.body.replacingOccurrences(of: #"{"platforms":"#, with: #"{"note":"x","platforms":"#)
            #expect(extra.body != platforms.body)
            let (failed, said) = try Self.check(Self.document, "responses", input: extra.line)
            #expect(failed == 1 && said.contains("note"), "\(said)")
        }
    }

    /// What `scripts/fuzz` (schemathesis) found, each kept: a known path asked with a method it does not take is a 405
    /// naming the methods it takes (it was a 404), and an artist token's `GET /v1/artists` refuses a `limit` out of
    /// range as the admin's does (it answered 200).
    @Test func whatTheFuzzerFound() async throws {
        try await RouteTests.withPopulatedStore([]) { store, artistToken in
            let router = buildRouter(store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, answerCache: nil)
            try await DocumentedResponses.test(Application(router: router)) { client in
                let admin: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
                for (method, uri, allowed) in [(HTTPRequest.Method.trace, "/v1/memory", "GET"), (.delete, "/v1/query", "POST"),
                                               (.post, "/v1/artists/label.one%3Aartist-7/streams", "GET"), (.put, "/healthz", "GET")] {
                    try await client.execute(uri: uri, method: method, headers: admin) { response in
                        #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                        #expect(response.headers[.allow] == allowed, "\(method) \(uri)")
                        #expect(String(buffer: response.body).contains(#""code":"method_not_allowed""#), "\(method) \(uri)")
                    }
                }
                try await client.execute(uri: "/v1/artists/a/nothing", method: .get, headers: admin) { response in
                    #expect(response.status == .notFound)
                }
                for limit in ["-179", "0", "10001", "ten"] {
                    try await client.execute(uri: "/v1/artists?limit=\(limit)", method: .get, headers: [.authorization: "Bearer \(artistToken)"]) { response in
                        #expect(response.status == .badRequest, "limit=\(limit)")
                        #expect(String(buffer: response.body).contains(#""code":"invalid_parameter""#), "limit=\(limit)")
                    }
                }
            }
        }
    }

    /// Runs the checker in `mode` on `document` with `input` on its standard input: its exit status and output.
    static func check(_ document: URL, _ mode: String, input: String = "") throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/lib/openapi_check.py").path, document.path, mode]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
