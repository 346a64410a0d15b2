import BackbeatAPIClient
import BackbeatKafka
import Foundation
import OpenAPIAsyncHTTPClient
import Testing

/// A client generated from docs/openapi.yaml by swift-openapi-generator (the `BackbeatAPIClient` target), as the
/// portal's apps would make one, reads real numbers from a running `serve`: the same as the JSON the API sends, typed.
@Suite(.serialized) struct GeneratedClientTests {
    @Test func theGeneratedClientReadsRealNumbers() async throws {
        let database = try await TestEnvironment.freshDatabase("generated_client")
        let replay = try ReplayTests.run(["replay", try ReplayTests.generate("client.ndjson", events: 3_000)], postgresURL: database)
        #expect(replay.status == 0, "\(replay.output)")
        let artistToken = try TokenTests.createToken(artist: "artist-0001", database: database)
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 2)
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database)
        try await service.waitUntilHealthy()
        let url = try #require(URL(string: service.baseURL))
        let admin = Client(serverURL: url, transport: AsyncHTTPClientTransport(), middlewares: [BearerToken(ServiceProcess.adminToken)])
        let artist = Client(serverURL: url, transport: AsyncHTTPClientTransport(), middlewares: [BearerToken(artistToken)])
        let path = Operations.artistStreams.Input.Path(artist_id: "artist-0001")

        // Streams by day: the typed answer equals the JSON one, and holds real numbers.
        let streams = try await admin.artistStreams(path: path, query: .init(from: "2026-10-01", to: "2026-10-11", granularity: .day)).ok.body.json
        let raw = try await HTTP.get(service.baseURL + "/v1/artists/artist-0001/streams?from=2026-10-01&to=2026-10-11&granularity=day")
        let rawTotals = try #require((try raw.json() as? [String: Any])?["totals"] as? [String: Any])
        #expect(streams.series.count == 10)
        #expect(streams.totals.streams > 0 && streams.totals.streams == rawTotals["streams"] as? Int, "\(streams.totals) vs \(rawTotals)")
        #expect(streams.totals.listeners == rawTotals["listeners"] as? Int)
        #expect(streams.series.map(\.streams).reduce(0, +) == streams.totals.streams)

        // The artist's own token reads the same; another artist is a typed 403.
        let own = try await artist.artistStreams(path: path, query: .init(from: "2026-10-01", to: "2026-10-11", granularity: .day)).ok.body.json
        #expect(own.totals == streams.totals)
        let other = try await artist.artistPlatforms(path: .init(artist_id: "artist-0002"), query: .init(from: "2026-10-01", to: "2026-10-11"))
        guard case .forbidden(let refused) = other else {
            Issue.record("another artist with an artist token: \(other)")
            return
        }
        #expect(try refused.body.json.error.code == .forbidden)

        // Platforms, top tracks and the summary, typed.
        let platforms = try await admin.artistPlatforms(path: .init(artist_id: "artist-0001"), query: .init(from: "2026-10-01", to: "2026-10-11")).ok.body.json
        #expect(platforms.platforms.map(\.streams).reduce(0, +) == streams.totals.streams)
        let top = try await admin.artistTopTracks(path: .init(artist_id: "artist-0001"), query: .init(from: "2026-10-01", to: "2026-10-11", limit: 3)).ok.body.json
        #expect(top.tracks.count == 3 && top.tracks[0].streams >= top.tracks[2].streams && top.tracks[0].streams > 0)
        let summary = try await admin.artistSummary(path: .init(artist_id: "artist-0001"), query: .init(as_of: "2026-10-11")).ok.body.json
        #expect(summary.streams_28d == streams.totals.streams && summary.as_of == "2026-10-11")

        // A refused question is a typed 400 with its code.
        let backwards = try await admin.artistStreams(path: path, query: .init(from: "2026-10-11", to: "2026-10-01"))
        guard case .badRequest(let bad) = backwards else {
            Issue.record("from after to: \(backwards)")
            return
        }
        #expect(try bad.body.json.error.code == .invalid_interval)
        _ = service.terminate()
    }
}
