import Foundation
import Testing

/// `backbeat artist set-zone` and `backbeat artist zone` through the binary: a zone the database lists is recorded, any
/// other name is refused with a message naming it and a non-zero exit, and nothing is recorded.
@Suite(.serialized) struct ArtistCommandTests {
    @Test func setZoneRecordsKnownZonesAndRefusesOthers() async throws {
        let database = try await TestEnvironment.freshDatabase("artist_zones")
        func zone(_ artist: String) throws -> String {
            let shown = try ReplayTests.run(["artist", "zone", "--artist", artist, "--log-level", "warning"], postgresURL: database)
            #expect(shown.status == 0, "\(shown.output)")
            return String(shown.output.split(separator: "\n").first { !$0.hasPrefix("counted ") } ?? "")
        }
        #expect(try zone("artist-0001") == "UTC")
        let set = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0001", "--zone", "Asia/Kathmandu", "--log-level", "warning"], postgresURL: database)
        #expect(set.status == 0 && set.output.contains("artist-0001 reports in Asia/Kathmandu"), "\(set.output)")
        #expect(try zone("artist-0001") == "Asia/Kathmandu")
        for bad in ["Mars/Olympus_Mons", "../../etc/passwd", "localtime"] {
            let refused = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0001", "--zone", bad, "--log-level", "warning"], postgresURL: database)
            #expect(refused.status == 1 && refused.output.contains("unknown time zone \"\(bad)\""), "\(bad): \(refused.output)")
        }
        #expect(try zone("artist-0001") == "Asia/Kathmandu")
        #expect(try zone("artist-0002") == "UTC")

        // An artist with stored days (replayed here): a change without the archive counts them again from the detail
        // kept, and says from when unique listeners are counted in the new zone; kept in the zone before on request.
        let path = NSTemporaryDirectory() + "artist-zone-\(UInt32.random(in: 0...UInt32.max)).ndjson"
        defer { try? FileManager.default.removeItem(atPath: path) }
        FileManager.default.createFile(atPath: path, contents: Data("""
            {"event_id":"z1","type":"social","occurred_at":"2026-10-02T10:00:00Z","artist_id":"artist-0002","platform":"x","action":"like","count":5}

            """.utf8))
        let replay = try ReplayTests.run(["replay", path, "--log-level", "warning"], postgresURL: database)
        #expect(replay.status == 0, "\(replay.output)")
        let recounted = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0002", "--zone", "Asia/Kolkata", "--log-level", "warning"], postgresURL: database)
        #expect(recounted.status == 0 && recounted.output.contains("counted again from the quarter-hour detail (1 rows), swapped in as rebuild ")
                && recounted.output.contains("unique listeners from "), "\(recounted.output)")
        #expect(try zone("artist-0002") == "Asia/Kolkata")
        let recountShown = try ReplayTests.run(["artist", "zone", "--artist", "artist-0002", "--log-level", "warning"], postgresURL: database)
        #expect(recountShown.output.contains("counted again from the detail; unique listeners from "), "\(recountShown.output)")
        let kept = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0002", "--zone", "Asia/Kathmandu", "--keep-counted-days", "--log-level", "warning"], postgresURL: database)
        #expect(kept.status == 0, "\(kept.output)")
        let shown = try ReplayTests.run(["artist", "zone", "--artist", "artist-0002", "--log-level", "warning"], postgresURL: database)
        #expect(shown.output.contains("Asia/Kathmandu\n") && shown.output.contains("counted in it since ") && !shown.output.contains("detail"), "\(shown.output)")
    }
}
