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
    }
}
