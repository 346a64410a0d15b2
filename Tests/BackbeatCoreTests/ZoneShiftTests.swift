@testable import BackbeatCore
import Foundation
import Testing

/// Moving stored quarter hours from one zone's clock to another's, against Foundation's zones: every instant of five
/// days around each change of 2026, a minute apart, is placed on both clocks by Foundation; a quarter hour that lands
/// exactly holds only instants of its landing, a split one instants of more than one, and a skipped one none.
@Suite struct ZoneShiftTests {
    static let pairs: [(old: String, new: String)] = [
        ("America/Los_Angeles", "Asia/Kolkata"), ("Asia/Kolkata", "UTC"), ("UTC", "America/Los_Angeles"),
        ("Asia/Kathmandu", "Pacific/Chatham"), ("Australia/Lord_Howe", "Europe/London"), ("America/Los_Angeles", "America/New_York"),
    ]
    static let starts = ["2026-03-06", "2026-03-27", "2026-04-03", "2026-09-25", "2026-10-23", "2026-10-30"]

    @Test(arguments: pairs.indices)
    func aQuarterHourLandsWhereItsInstantsDo(pair: Int) throws {
        let (oldName, newName) = Self.pairs[pair]
        let shift = ZoneShift(from: try ZoneRulesTests.rules(oldName), to: try ZoneRulesTests.rules(newName))
        let old = TimeZone(identifier: oldName)!, new = TimeZone(identifier: newName)!
        func local(_ instant: Int64, _ zone: TimeZone) -> Int64 {
            instant + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))))
        }
        var landings: [Int64: Set<Int64>] = [:]
        for start in Self.starts {
            let from = RFC3339.parseDate(start)!.daysSinceEpoch * 86_400
            for instant in stride(from: from, to: from + 5 * 86_400, by: 60) {
                landings[local(instant, old).floorDiv(900), default: []].insert(local(instant, new).floorDiv(900))
            }
        }
        var split = 0
        for (quarter, landed) in landings {
            switch shift.landing(of: quarter) {
            case .exactly(let target): #expect(landed == [target], "\(oldName) to \(newName): quarter \(quarter)")
            case .split(let targets):
                #expect(landed == Set(targets) && landed.count > 1, "\(oldName) to \(newName): quarter \(quarter)")
                split += 1
            case .never: Issue.record("\(oldName) to \(newName): quarter \(quarter) holds instants")
            }
        }
        // Los Angeles' four fall-back quarters of 2026-11-01 land on two quarters each of these clocks (New York's went
        // back three hours earlier); no other zone here goes back in these days but Lord Howe (by 30 minutes: two).
        let expected = ["America/Los_Angeles": 4, "Australia/Lord_Howe": 2][oldName] ?? 0
        #expect(split == expected, "\(oldName) to \(newName): \(split) split quarters")
        // A quarter hour the old clock skipped (Los Angeles' 2026-03-08 02:00) lands nowhere.
        if oldName == "America/Los_Angeles" {
            let skipped = (RFC3339.parseDate("2026-03-08")!.daysSinceEpoch * 86_400 + 2 * 3600) / 900
            #expect(shift.landing(of: skipped) == .never)
        }
    }
}
