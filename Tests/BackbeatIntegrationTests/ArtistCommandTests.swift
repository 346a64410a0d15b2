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
            return shown.output.trimmingCharacters(in: .whitespacesAndNewlines)
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

        // An artist with stored days (replayed here): a change without the archive would leave them in the zone
        // before, so it is refused naming the way to count them again, and made only when asked to keep them.
        let path = NSTemporaryDirectory() + "artist-zone-\(UInt32.random(in: 0...UInt32.max)).ndjson"
        defer { try? FileManager.default.removeItem(atPath: path) }
        FileManager.default.createFile(atPath: path, contents: Data("""
            {"event_id":"z1","type":"social","occurred_at":"2026-10-02T10:00:00Z","artist_id":"artist-0002","platform":"x","action":"like","count":5}

            """.utf8))
        let replay = try ReplayTests.run(["replay", path, "--log-level", "warning"], postgresURL: database)
        #expect(replay.status == 0, "\(replay.output)")
        let refused = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0002", "--zone", "Asia/Kolkata", "--log-level", "warning"], postgresURL: database)
        #expect(refused.status == 1 && refused.output.contains("artist-0002 has days counted in UTC") && refused.output.contains("--keep-counted-days"), "\(refused.output)")
        #expect(try zone("artist-0002") == "UTC")
        let kept = try ReplayTests.run(["artist", "set-zone", "--artist", "artist-0002", "--zone", "Asia/Kolkata", "--keep-counted-days", "--log-level", "warning"], postgresURL: database)
        #expect(kept.status == 0, "\(kept.output)")
        let shown = try ReplayTests.run(["artist", "zone", "--artist", "artist-0002", "--log-level", "warning"], postgresURL: database)
        #expect(shown.output.contains("Asia/Kolkata\n") && shown.output.contains("counted in it since "), "\(shown.output)")
    }
}
