@testable import BackbeatCore
import Testing

/// The local clock's kept stretches against the zone's own lookup (`ZoneRules.offset(atSecond:)`, itself checked
/// against Python in `ZoneRulesTests`), walking forward as a stream does and jumping about as late events do.
@Suite struct LocalClockTests {
    @Test func agreesWithTheRulesWalkingAndJumping() throws {
        for name in ZoneRulesTests.zones {
            let rules = try ZoneRulesTests.rules(name)
            var clock = LocalClock(rules)
            // Forward every 47 minutes 1965-2065, across every transition and 40 years of footer rules.
            var instant = CivilDate(year: 1965, month: 1, day: 1).daysSinceEpoch * 86_400
            let end = CivilDate(year: 2065, month: 1, day: 1).daysSinceEpoch * 86_400
            var checked = 0
            while instant < end {
                let local = clock.localSeconds(atSecond: instant)
                guard local == instant + Int64(rules.offset(atSecond: instant)) else {
                    Issue.record("\(name) at \(instant): \(local - instant), the rules say \(rules.offset(atSecond: instant))")
                    break
                }
                instant += 47 * 60
                checked += 1
            }
            #expect(checked > 1_000_000)
            // Each transition's last second before and first after, in a scattered order.
            var generator = SystemRandomNumberGenerator()
            let edges = rules.transitions.flatMap { [$0 - 1, $0] }.shuffled(using: &generator)
            for edge in edges {
                #expect(clock.localSeconds(atSecond: edge) == edge + Int64(rules.offset(atSecond: edge)), "\(name) at \(edge)")
            }
        }
    }

    @Test func aSpanHoldsOneOffsetToItsEnds() throws {
        for name in ZoneRulesTests.zones {
            let rules = try ZoneRulesTests.rules(name)
            for year in [1900, 1950, 1990, 2011, 2026, 2037, 2038, 2050, 2090] {
                for month in 1...12 {
                    let instant = CivilDate(year: year, month: month, day: 15).daysSinceEpoch * 86_400
                    let span = rules.span(atSecond: instant)
                    #expect(span.contains(instant) && span.offset == rules.offset(atSecond: instant), "\(name) \(year)-\(month)")
                    if span.from != .min { #expect(rules.offset(atSecond: span.from) == span.offset, "\(name) \(year)-\(month) from") }
                    if span.until != .max { #expect(rules.offset(atSecond: span.until - 1) == span.offset, "\(name) \(year)-\(month) until") }
                }
            }
        }
    }

    /// A local time's offset makes it the earliest instant that shows it; a time the clock skipped gets the offset
    /// before the skip.
    @Test func aLocalTimeGetsTheOffsetOfItsEarliestInstant() throws {
        for name in ZoneRulesTests.zones {
            let rules = try ZoneRulesTests.rules(name)
            var instant = CivilDate(year: 1970, month: 1, day: 1).daysSinceEpoch * 86_400
            let end = CivilDate(year: 2060, month: 1, day: 1).daysSinceEpoch * 86_400
            while instant < end {
                let local = instant + Int64(rules.offset(atSecond: instant))
                let offset = rules.offset(atLocalSecond: local)
                let found = local - Int64(offset)
                guard rules.offset(atSecond: found) == offset, found <= instant else {
                    Issue.record("\(name): local \(local) of \(instant) got offset \(offset), the instant \(found)")
                    break
                }
                instant += 127 * 60
            }
        }
        let losAngeles = try ZoneRulesTests.rules("America/Los_Angeles")
        // 2026-03-08 02:30 never happened there: the offset before, PST.
        #expect(losAngeles.offset(atLocalSecond: CivilDate(year: 2026, month: 3, day: 8).daysSinceEpoch * 86_400 + 9_000) == -8 * 3600)
        // 2026-11-01 01:30 happened twice: the first, PDT.
        #expect(losAngeles.offset(atLocalSecond: CivilDate(year: 2026, month: 11, day: 1).daysSinceEpoch * 86_400 + 5_400) == -7 * 3600)
    }
}
