import BackbeatKafka
import Foundation
import Testing

/// Whatever a client sends, the answer is a 2xx or a 4xx with a JSON error, never a 500, and never another artist's
/// numbers for an artist token.
@Suite(.serialized) struct HostileQueryTests {
    static let injections = ["'; DROP TABLE stream_hourly; --", "\" OR 1=1 --", "artist-0001' OR '1'='1", "%00", "../../etc/passwd",
                             "$(id)", "\u{202E}", String(repeating: "a", count: 5000), "☃", "%ZZ", "1e999", "-1", "null"]

    /// Paths (below /v1/) with malformed, hostile or oversized parameters.
    static var paths: [String] {
        var paths: [String] = []
        let artist = "artist-0001"
        let endpoints = ["streams", "platforms", "demographics", "tracks/top", "revenue", "social", "summary", "page", "page/sections", "page/sources", "page/ctas", "page/funnel"]
        for endpoint in endpoints {
            paths.append("artists/\(artist)/\(endpoint)")  // missing parameters
            for value in injections {
                let escaped = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                paths.append("artists/\(artist)/\(endpoint)?from=\(escaped)&to=2026-10-11")
                paths.append("artists/\(artist)/\(endpoint)?from=2026-10-01&to=2026-10-11&granularity=\(escaped)&limit=\(escaped)&as_of=\(escaped)")
                paths.append("artists/\(artist)/\(endpoint)?from=2026-10-01&to=2026-10-11&platform=\(escaped)&track_id=\(escaped)&currency=\(escaped)")
                paths.append("artists/\(artist)/\(endpoint)?from=2026-10-01&to=2026-10-11&portfolio_id=\(escaped)")
                paths.append("artists/\(escaped)/\(endpoint)?from=2026-10-01&to=2026-10-11")
                paths.append("artists/\(artist)/\(endpoint)?from=2026-10-01&to=2026-10-11&tz=\(escaped)")
                paths.append("artists/\(artist)/\(endpoint)?from=\(escaped)&to=2026-10-11&tz=Asia/Tokyo")
                if endpoint == "streams" { paths.append("artists?limit=\(escaped)") }
            }
            paths.append("artists/\(artist)/\(endpoint)?from=1970-01-01&to=9999-12-31&granularity=hour")  // far too many points
            paths.append("artists/\(artist)/\(endpoint)?from=2026-10-11&to=2026-10-01")
            paths.append("artists/\(artist)/\(endpoint)?from=2026-10-01T00:30:00Z&to=2026-10-11")
            paths.append("artists/\(artist)/\(endpoint)?from=2026-10-01&to=2026-10-11&limit=999999999999999999999")
            // Read in another zone: far too long, backwards, off the second, at the ends of the calendar, a zone that
            // does not tile the artist's hours (its zone is set below: Kathmandu).
            for range in ["from=1970-01-01&to=9999-12-31&granularity=hour", "from=2026-10-11&to=2026-10-01", "from=2026-10-01T00:00:00.5Z&to=2026-10-11",
                          "from=0001-01-01&to=0001-01-05", "from=9999-12-28&to=9999-12-31", "from=2026-10-01&to=2026-10-11&granularity=hour"] {
                for zone in ["Asia/Tokyo", "Asia/Kathmandu", "UTC", "Antarctica/Troll"] {
                    paths.append("artists/\(artist)/\(endpoint)?\(range)&tz=\(zone)")
                }
            }
        }
        paths += ["artists", "artists/", "nothing", "query", "memory/x", "artists/\(artist)/streams/../../memory"]
        return paths
    }

    /// POST /v1/query bodies that are malformed, hostile or oversized.
    static var bodies: [String] {
        var bodies = ["", "{", "[]", "null", "\"x\"", #"{"dataset":1}"#, #"{"dataset":"streams"}"#,
                      #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","group_by":"artist_id"}"#,
                      #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","group_by":["track_id","platform","country","age_range","gender","artist_id"],"granularity":"hour"}"#,
                      #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","filters":{"artist_id":[]}}"#,
                      #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","limit":-5}"#,
                      #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","limit":1e400}"#,
                      #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","order_by":{"metric":"nope","direction":"sideways"}}"#,
                      #"{"dataset":"revenue","from":"2026-10-01","to":"2026-10-11","metrics":["amount"]}"#,
                      "{\"dataset\":\"streams\",\"from\":\"2026-10-01\",\"to\":\"2026-10-11\",\"filters\":{\"platform\":[" + String(repeating: "\"x\",", count: 200) + "\"x\"]}}",
                      "{\"pad\":\"" + String(repeating: "x", count: 70_000) + "\"}",
                      String(repeating: "[", count: 10_000)]
        for value in injections {
            let quoted = String(decoding: try! JSONSerialization.data(withJSONObject: [value], options: [.fragmentsAllowed]), as: UTF8.self)
            bodies.append(#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","group_by":\#(quoted),"filters":{"artist_id":\#(quoted)}}"#)
            bodies.append(#"{"dataset":\#(quoted.dropFirst().dropLast()),"from":"2026-10-01","to":"2026-10-11"}"#)
            bodies.append(#"{"dataset":"page","from":"2026-10-01","to":"2026-10-11","group_by":["referrer"],"filters":{"referrer":\#(quoted),"type":\#(quoted)}}"#)
        }
        return bodies
    }

    @Test func hostileRequestsGetClientErrorsNeverServerErrors() async throws {
        let database = try await TestEnvironment.freshDatabase("hostile")
        let events = try ReplayTests.generate("hostile.ndjson", events: 2_000)
        #expect(try ReplayTests.run(["replay", events], postgresURL: database).status == 0)
        let token = try TokenTests.createToken(artist: "artist-0001", database: database)
        let broker = try DevBroker(topics: ["streams", "revenue", "social"], partitions: 1)
        // No rate limit: every request must reach the handlers.
        let service = try ServiceProcess(brokers: broker.bootstrapServers, postgresURL: database, arguments: ["--artist-rate-limit", "0"])
        try await service.waitUntilHealthy()
        let zone = try await HTTP.put(service.baseURL + "/v1/artists/artist-0001/zone", json: #"{"zone":"Asia/Kathmandu","keep_counted_days":true}"#)
        #expect(zone.status == 200, "\(zone.text)")
        let api = service.baseURL + "/v1/"

        var sent = 0
        for credential in [ServiceProcess.adminToken, token] {
            for path in Self.paths {
                guard let url = URL(string: api + path) else { continue }
                let reply = try await HTTP.get(url.absoluteString, token: credential)
                sent += 1
                #expect(reply.status < 500, "GET \(path.prefix(120)): \(reply.status) \(reply.text.prefix(200))")
                if reply.status >= 400 {
                    #expect((try? reply.json() as? [String: Any])?["error"] != nil, "GET \(path.prefix(120)): a JSON error")
                }
                if credential == token {
                    #expect(!reply.text.contains("artist-0002") || reply.status >= 400, "GET \(path.prefix(120))")
                    #expect(reply.status != 429)
                }
            }
            for body in Self.bodies {
                let reply = try await HTTP.post(api + "query", json: body, token: credential)
                sent += 1
                #expect(reply.status < 500, "POST \(body.prefix(120)): \(reply.status) \(reply.text.prefix(200))")
                if credential == token {
                    #expect(reply.status >= 400 || !reply.text.contains("artist-0002"), "POST \(body.prefix(120))")
                }
            }
        }
        #expect(sent > 300)

        // A parameter or body field an endpoint does not take is a 400 naming it, not silently ignored; every
        // parameter an endpoint documents is still taken.
        let artist = api + "artists/artist-0001/"
        let range = "from=2026-10-01&to=2026-10-11"
        let misspelt: [(String, String)] = [
            (artist + "streams?\(range)&granulariy=week", "granulariy"), (artist + "platforms?\(range)&granularity=day", "granularity"),
            (artist + "demographics?\(range)&limit=3", "limit"), (artist + "tracks/top?\(range)&limits=3", "limits"),
            (artist + "revenue?\(range)&currency=USD", "currency"), (artist + "social?\(range)&platform=x", "platform"),
            (artist + "summary?as_of=2026-10-11&from=2026-10-01", "from"), (api + "artists?limt=5", "limt"),
        ]
        for (url, name) in misspelt {
            let reply = try await HTTP.get(url)
            let error = (try? reply.json() as? [String: Any])?["error"] as? [String: String]
            #expect(reply.status == 400 && error?["code"] == "unknown_parameter" && error?["message"]?.contains("unknown parameter \(name);") == true,
                    "\(url): \(reply.status) \(reply.text.prefix(200))")
        }
        for (body, name) in [(#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","granulairty":"day"}"#, "granulairty"),
                             (#"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","order_by":{"metrics":"streams"}}"#, "order_by.metrics")] {
            let reply = try await HTTP.post(api + "query", json: body, token: ServiceProcess.adminToken)
            #expect(reply.status == 400 && reply.text.contains("unknown_parameter") && reply.text.contains("unknown parameter \(name);"), "\(body): \(reply.text)")
        }
        for url in [artist + "streams?\(range)&granularity=day&track_id=t&platform=spotify&country=SE&age_range=25-34&gender=female",
                    artist + "platforms?\(range)", artist + "demographics?\(range)", artist + "tracks/top?\(range)&limit=3",
                    artist + "revenue?\(range)&granularity=week", artist + "social?\(range)&granularity=all",
                    artist + "summary?as_of=2026-10-11", api + "artists?limit=5"] {
            let reply = try await HTTP.get(url)
            #expect(reply.status == 200, "\(url): \(reply.status) \(reply.text.prefix(200))")
        }
        let full = #"{"dataset":"streams","from":"2026-10-01","to":"2026-10-11","granularity":"day","group_by":["platform"],"filters":{"artist_id":["artist-0001"]},"order_by":{"metric":"streams","direction":"desc"},"limit":5}"#
        #expect(try await HTTP.post(api + "query", json: full, token: ServiceProcess.adminToken).status == 200)
        #expect(try await HTTP.get(service.baseURL + "/healthz").status == 200, "still serving")
        #expect(service.terminate() == 0)
        withExtendedLifetime(broker) {}
    }
}
