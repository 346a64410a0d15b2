import BackbeatCore
import BackbeatServer
import BackbeatStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET` and `PUT /v1/artists/{artist_id}/zone` in process, against the real PostgreSQL and the system's zone
/// database: UTC until set; set by the admin alone; an unknown name refused naming it, and nothing recorded.
@Suite(.serialized) struct ArtistZoneRouteTests {
    @Test func theAdminSetsAZoneTheArtistReadsIt() async throws {
        try await RouteTests.withPopulatedStore([]) { store, artistToken in
            let router = buildRouter(store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0)
            try await Application(router: router).test(.router) { client in
                func ask(_ method: HTTPRequest.Method, _ artist: String, _ token: String?, body: String? = nil) async throws -> (Int, String) {
                    var headers: HTTPFields = [:]
                    if let token { headers[.authorization] = "Bearer \(token)" }
                    return try await client.execute(
                        uri: "/v1/artists/\(artist)/zone", method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
                    ) { ($0.status.code, String(buffer: $0.body)) }
                }
                /// The 200 answer's members (nil for any other status or body).
                func zoneAnswer(_ method: HTTPRequest.Method, _ artist: String, _ token: String?, body: String? = nil) async throws -> [String: String]? {
                    let (status, text) = try await ask(method, artist, token, body: body)
                    return status == 200 ? try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)) : nil
                }
                let own = RouteTests.artist
                #expect(try await zoneAnswer(.get, own, artistToken) == ["artist_id": "artist-0001", "zone": "UTC"])
                // Only the admin sets it; the artist's own token may not.
                #expect(try await ask(.put, own, artistToken, body: #"{"zone":"Asia/Kathmandu"}"#).0 == 403)
                #expect(try await ask(.put, own, nil, body: #"{"zone":"Asia/Kathmandu"}"#).0 == 401)
                #expect(try await zoneAnswer(.put, own, RouteTests.adminToken, body: #"{"zone":"Asia/Kathmandu"}"#) == ["artist_id": "artist-0001", "zone": "Asia/Kathmandu"])
                #expect(try await zoneAnswer(.get, own, artistToken) == ["artist_id": "artist-0001", "zone": "Asia/Kathmandu"])
                #expect(try await store.zoneRecord(of: own)?.zone == "Asia/Kathmandu")
                // Every name refused names itself, and leaves the recorded zone as it was.
                for bad in ["Mars/Olympus_Mons", "../../etc/passwd", "localtime", "posixrules", "right/UTC", "Factory", "asia/kathmandu", " UTC"] {
                    let (status, body) = try await ask(.put, own, RouteTests.adminToken, body: #"{"zone":"\#(bad)"}"#)
                    #expect(status == 400 && body.contains(#""code":"unknown_zone""#) && body.contains(bad.replacingOccurrences(of: "/", with: "\\/")), "\(bad): \(body)")
                }
                for malformed in ["", "{}", #"{"zone":5}"#, "[\"UTC\"]", "not json", #"{"zone":null}"#, #"{"zone":"UTC","keep_counted_days":null}"#,
                                  #"{"zone":"UTC","keep_counted_days":1}"#] {
                    let (status, body) = try await ask(.put, own, RouteTests.adminToken, body: malformed)
                    #expect(status == 400 && body.contains(#""code":"invalid_body""#), "\(malformed): \(body)")
                }
                let (status, body) = try await ask(.put, own, RouteTests.adminToken, body: #"{"zone":"UTC","tz":"UTC"}"#)
                #expect(status == 400 && body.contains(#""code":"unknown_parameter""#) && body.contains("tz"), "\(body)")
                #expect(try await store.zoneRecord(of: own)?.zone == "Asia/Kathmandu")
                // A link name of the database is a zone too; another artist is untouched.
                #expect(try await zoneAnswer(.put, own, RouteTests.adminToken, body: #"{"zone":"US/Pacific"}"#)?["zone"] == "US/Pacific")
                #expect(try await zoneAnswer(.get, "artist-0002", RouteTests.adminToken) == ["artist_id": "artist-0002", "zone": "UTC"])
                #expect(try await ask(.get, "artist-0002", artistToken).0 == 403)

                // An artist with stored days: a change counts them again in the new zone from the detail kept, and says
                // from which day on unique listeners are counted in it (the day after the change); kept in the zone
                // before on request, with the instant from which the new zone counts.
                var ledger = IngestLedger()
                let partition = TopicPartition(topic: "social", partition: 0)
                ledger.assign(partition, storedOffset: nil)
                let event = #"{"event_id":"z","type":"social","occurred_at":"2026-10-02T10:00:00Z","artist_id":"artist-0003","platform":"x","action":"like","count":5}"#
                ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: 0), key: nil, value: Array(event.utf8)),
                              now: Timestamp(seconds: 1_900_000_000))
                let taken = ledger.takeBatch()
                var batch = try #require(taken)
                batch.zonesGeneration = try await store.recordedZones().generation
                try await store.write(batch)
                let kolkata = try ZoneDatabase().rules("Asia/Kolkata")
                let today = kolkata.localDay(ofSecond: Timestamp.wallClock().seconds)
                let (changed, text) = try await ask(.put, "artist-0003", RouteTests.adminToken, body: #"{"zone":"Asia/Kolkata"}"#)
                let answer = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
                let listenersFrom = try #require(answer["listeners_from"] as? String).flatMap(RFC3339.parseDate)?.daysSinceEpoch
                #expect(changed == 200 && answer["zone"] as? String == "Asia/Kolkata" && answer["recounted_rows"] as? Int == 1, "\(text)")
                #expect(listenersFrom == today + 1 || listenersFrom == today + 2, "\(text)")
                #expect(answer["counts_from"] == nil && answer["counts_missing"] == nil, "every count moved: \(text)")
                #expect(try await zoneAnswer(.get, "artist-0003", RouteTests.adminToken)?["listeners_from"] == answer["listeners_from"] as? String)
                #expect(try await zoneAnswer(.put, "artist-0003", RouteTests.adminToken, body: #"{"zone":"Asia/Kolkata"}"#)?["zone"] == "Asia/Kolkata",
                        "the zone it has: nothing to count again")
                let kept = try await zoneAnswer(.put, "artist-0003", RouteTests.adminToken, body: #"{"zone":"UTC","keep_counted_days":true}"#)
                #expect(kept?["zone"] == "UTC" && kept?["counted_in_zone_since"].flatMap(RFC3339.parseTimestamp) != nil, "\(String(describing: kept))")
                #expect(kept?["listeners_from"] == nil, "a change keeping the days counted clears what a recount left")
                #expect(try await ask(.put, "artist-0003", RouteTests.adminToken, body: #"{"zone":"UTC","keep_counted_days":"yes"}"#).0 == 400)
            }
        }
    }

    @Test func theDatabaseListsZonesAndLinksOnly() throws {
        let zones = ZoneDatabase()
        for name in ["UTC", "America/Los_Angeles", "Asia/Kolkata", "Asia/Calcutta", "Asia/Kathmandu", "Pacific/Chatham", "Etc/GMT+5"] {
            #expect((try? zones.rules(name)) != nil, "\(name)")
        }
        #expect(try zones.rules("Asia/Kathmandu").offset(atSecond: 1_795_000_000) == 20_700)
        for name in ["Factory", "localtime", "posixrules", "right/UTC", "zone.tab", "tzdata.zi", "America", "Nowhere/Town"] {
            #expect(throws: ZoneDatabase.UnknownZone.self, "\(name)") { try zones.rules(name) }
        }
        let listed = ZoneDatabase.names(listedIn: "# version\nZ Asia/Kathmandu 5:41:16 - LMT 1920\nL Asia/Kathmandu Asia/Katmandu\nZ Factory 0 - -00\nR x 1 2 - 0 0 - 0\n")
        #expect(listed == ["Asia/Kathmandu", "Asia/Katmandu"])
    }
}
