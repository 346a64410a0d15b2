@testable import BackbeatCore
import Testing

/// The stamps kept answers are checked against: a change moves the stamp of every answer of its artist that read one
/// of its days, and of no other (save artists sharing the counter, which only retires more).
struct ArtistVersionsTests {
    static let artist = "artist-a"

    @Test func aChangeMovesTheStampsOfTheDaysItTouchedOnly() {
        var versions = ArtistVersions()
        let weeks: [Range<Int64>] = [0..<7, 7..<14, 14..<21, 21..<28]
        let fourWeeks: Range<Int64> = 0..<28
        func stamps() -> [ArtistVersions.Stamp] { (weeks + [fourWeeks]).map { versions.stamp(of: Self.artist, reading: .all, days: $0) } }
        var before = stamps()
        /// Which of the four weeks and the four weeks together moved since the last call.
        func moved() -> [Bool] {
            let now = stamps()
            defer { before = now }
            return zip(now, before).map { $0 != $1 }
        }

        versions.changed(ArtistDays([Self.artist], .streams, days: 27...27))
        #expect(moved() == [false, false, false, true, true], "today's events")
        versions.changed(ArtistDays([Self.artist], .streams, days: 27...27))
        #expect(moved() == [false, false, false, true, true], "today's again")
        versions.changed(ArtistDays([Self.artist], .streams, days: 10...15))
        #expect(moved() == [false, true, true, false, true], "late events of days 10 to 15")
        versions.changed(ArtistDays([Self.artist], .streams, days: 7...7))
        #expect(moved() == [false, true, false, false, true], "the last day of an answer's days")
        versions.changed(ArtistDays([Self.artist], .streams, days: 28...28))
        #expect(moved() == [false, false, false, false, false], "the day after every answer")
        let other = (1...50).map { "artist-\($0)" }.first { ArtistDays([$0], .streams, days: 0...0) != ArtistDays([Self.artist], .streams, days: 0...0) }!
        versions.changed(ArtistDays([other], .streams, days: 0...27))
        #expect(moved() == [false, false, false, false, false], "another artist's")
        versions.changedEverything()
        #expect(moved() == [true, true, true, true, true], "a change that may touch anything")
    }

    /// A change moves the stamps of answers that read its family only: a stream retires the artist's stream and
    /// summary answers, not its revenue or page answers.
    @Test func aChangeMovesTheStampsOfItsFamilyOnly() {
        var versions = ArtistVersions()
        let reads: [ArtistVersions.Families] = [.streams, .revenue, .social, .page, [.streams, .revenue, .social], .all]
        var before = reads.map { versions.stamp(of: Self.artist, reading: $0, days: 0..<28) }
        func moved() -> [Bool] {
            let now = reads.map { versions.stamp(of: Self.artist, reading: $0, days: 0..<28) }
            defer { before = now }
            return zip(now, before).map { $0 != $1 }
        }
        versions.changed(ArtistDays([Self.artist], .streams, days: 27...27))
        #expect(moved() == [true, false, false, false, true, true], "a stream")
        versions.changed(ArtistDays([Self.artist], .revenue, days: 3...3))
        #expect(moved() == [false, true, false, false, true, true], "a sale")
        versions.changed(ArtistDays([Self.artist], .page, days: 10...11))
        #expect(moved() == [false, false, false, true, false, true], "a page view")
        versions.changed(ArtistDays([Self.artist], [.social, .page], days: 10...11))
        #expect(moved() == [false, false, true, true, true, true], "a follow and a page view")
        versions.changed(ArtistDays([Self.artist], .revenue, days: 28...28))
        #expect(moved() == [false, false, false, false, false, false], "a sale of the day after")
    }

    /// Beyond `spansKept` spans a counter joins its two oldest: answers of the days between them are retired too,
    /// and a stamp never comes back to a value it had before a change of its days.
    @Test func joinedSpansRetireMoreNeverLess() {
        var versions = ArtistVersions()
        var seen: [Range<Int64>: Set<ArtistVersions.Stamp>] = [:]
        let reads: [Range<Int64>] = (0..<20).map { $0..<$0 + 3 }
        for read in reads { seen[read, default: []].insert(versions.stamp(of: Self.artist, reading: .all, days: read)) }
        for day in stride(from: Int64(0), to: 20, by: 2) {
            versions.changed(ArtistDays([Self.artist], .streams, days: day...day))
            for read in reads {
                let stamp = versions.stamp(of: Self.artist, reading: .all, days: read)
                if read.contains(day) {
                    #expect(!seen[read]!.contains(stamp), "day \(day) changed under \(read)")
                }
                seen[read, default: []].insert(stamp)
            }
        }
        // The latest change (day 18) is still told apart: day 19 on its own did not move.
        let before = versions.stamp(of: Self.artist, reading: .all, days: 19..<20)
        versions.changed(ArtistDays([Self.artist], .streams, days: 18...18))
        #expect(versions.stamp(of: Self.artist, reading: .all, days: 19..<20) == before)
    }

    @Test func announcementsCarryTheArtistsAndTheirDays() throws {
        var changed = ArtistDays()
        changed.insert(Self.artist, .streams, days: 20_400...20_401)
        changed.insert("artist-b", .streams, days: 20_390...20_390)
        let heard = try #require(ArtistDays(announcement: changed.announcement))
        #expect(heard == ArtistDays([Self.artist, "artist-b"], .streams, days: 20_390...20_401))
        changed.insert("artist-c", .revenue, days: 20_395...20_395)
        let withRevenue = try #require(ArtistDays(announcement: changed.announcement))
        var expected = ArtistDays([Self.artist, "artist-b"], .streams, days: 20_390...20_401)
        expected.insert("artist-c", .revenue, days: 20_390...20_401)
        #expect(withRevenue == expected)
        let length = ArtistVersions.allSlots / 4
        for text in ["", "*", String(repeating: "0", count: length), String(repeating: "g", count: length) + " 1 2",
                     String(repeating: "0", count: length) + " 3 2", String(repeating: "0", count: length - 1) + " 1 2",
                     String(repeating: "0", count: 1024) + " 1 2"] {
            #expect(ArtistDays(announcement: text) == nil, "\(text.prefix(20))")
        }
    }
}
