import BackbeatCore
import BackbeatTestSupport
import Testing

/// A session's state of the page funnel: order-free, idempotent, and counted as docs/events.md says.
@Suite struct FunnelSessionTests {
    typealias Step = FunnelSession.Step

    /// The session's counts computed from its events as the contract words it: the first event starts 24 hours;
    /// counted on its first view in them, with a section view and then also a CTA click in them, in any order.
    static func contract(_ events: [(Step, Int64)]) -> (at: Int64, counts: FunnelCounts)? {
        guard let start = events.map(\.1).min() else { return nil }
        let inWindow = events.filter { $0.1 < start + FunnelSession.window }
        func has(_ step: Step) -> Bool { inWindow.contains { $0.0 == step } }
        guard let view = inWindow.filter({ $0.0 == .view }).map(\.1).min() else { return nil }
        return (view, FunnelCounts(sessions: 1, withSection: has(.section) ? 1 : 0, withClick: has(.section) && has(.click) ? 1 : 0))
    }

    static func state(_ events: some Sequence<(Step, Int64)>) -> FunnelSession? {
        var state: FunnelSession?
        for (step, at) in events {
            let one = FunnelSession(step, at: at)
            if state == nil { state = one } else { state!.formUnion(one) }
        }
        return state
    }

    @Test(.seeded) func aSessionCountsWhatItsEventsSayInAnyOrderAndOnceEach() {
        var random = TestRandom()
        let steps: [Step] = [.view, .section, .click, .other]
        var counted = 0, withClick = 0, cutByWindow = 0
        for _ in 0..<2_000 {
            let events = (0..<Int.random(in: 0..<6, using: &random) + 1).map { _ in
                (steps[Int.random(in: 0..<4, using: &random)], 1_790_000_000 + Int64.random(in: 0..<40 * 3600, using: &random))
            }
            let expected = Self.contract(events)
            let inOrder = Self.state(events)!
            let shuffled = Self.state(events.shuffled(using: &random))!
            let twice = Self.state(events + events.shuffled(using: &random))!
            #expect(inOrder == shuffled && inOrder == twice, "\(events)")
            #expect(inOrder.counted?.at == expected?.at && inOrder.counted?.counts == expected?.counts, "\(events)")
            // Two halves merged, as two flushes' states are.
            let half = events.count / 2
            var merged = Self.state(events[..<half]) ?? Self.state(events[half...])!
            if let rest = Self.state(events[half...]) { merged.formUnion(rest) }
            #expect(merged == inOrder)
            if expected != nil { counted += 1 }
            if expected?.counts.withClick == 1 { withClick += 1 }
            if events.contains(where: { $0.0 == .view }) && expected == nil { cutByWindow += 1 }
        }
        #expect(counted > 500 && withClick > 50 && cutByWindow > 20, "\(counted) counted, \(withClick) with a click, \(cutByWindow) cut")
    }

    @Test func theWindowIsTwentyFourHoursFromTheFirstEventAndStagesAreNested() {
        let start: Int64 = 1_790_000_000, day = FunnelSession.window
        #expect(Self.state([(.other, start), (.view, start + day - 1)])?.counted?.at == start + day - 1)
        #expect(Self.state([(.other, start), (.view, start + day)])?.counted == nil)
        // A section view before the view counts; a click without a section view does not.
        let sectioned = Self.state([(.section, start), (.view, start + 60), (.click, start + 120)])?.counted?.counts
        #expect(sectioned == FunnelCounts(sessions: 1, withSection: 1, withClick: 1))
        let clickedOnly = Self.state([(.view, start), (.click, start + 60)])?.counted?.counts
        #expect(clickedOnly == FunnelCounts(sessions: 1, withSection: 0, withClick: 0))
        // A late first event moves the window: the click a day after it falls out.
        let late = Self.state([(.view, start + 3600), (.section, start + 3700), (.click, start + day + 100), (.other, start)])?.counted?.counts
        #expect(late == FunnelCounts(sessions: 1, withSection: 1, withClick: 0))
    }

    /// What a session adds when its state changes, summed over its states, is what its last state counts.
    @Test(.seeded) func changesSumToTheLastStatesCounts() {
        var random = TestRandom()
        let steps: [Step] = [.view, .section, .click, .other]
        for _ in 0..<1_000 {
            var stored: FunnelSession?
            var sums: [Int64: FunnelCounts] = [:]
            for _ in 0..<Int.random(in: 0..<6, using: &random) + 1 {
                let one = FunnelSession(steps[Int.random(in: 0..<4, using: &random)], at: 1_790_000_000 + Int64.random(in: 0..<30 * 3600, using: &random))
                var new = stored ?? one
                new.formUnion(one)
                for change in FunnelSession.changes(from: stored, to: new) { sums[change.at, default: FunnelCounts()] += change.counts }
                #expect(FunnelSession.changes(from: new, to: new).isEmpty)
                stored = new
            }
            let expected: [Int64: FunnelCounts] = stored!.counted.map { [$0.at: $0.counts] } ?? [:]
            #expect(sums.filter { !$0.value.isZero } == expected)
        }
    }

    /// A rebuild counts a session's events on some days again and keeps the rest as stored: the stored state less
    /// the counted instants (`excluding`), merged with the state of the counted events, is the stored state.
    @Test(.seeded) func aStateLessSomeInstantsMergedWithTheirEventsIsTheWholeState() {
        var random = TestRandom()
        let steps: [Step] = [.view, .section, .click, .other]
        var split = 0
        for _ in 0..<2_000 {
            let events = (0..<Int.random(in: 0..<6, using: &random) + 1).map { _ in
                (steps[Int.random(in: 0..<4, using: &random)], 1_790_000_000 + Int64.random(in: 0..<60 * 3600, using: &random))
            }
            let whole = Self.state(events)!
            // The counted instants: an interval of hours, as a rebuild's days are.
            let from = 1_790_000_000 + Int64.random(in: 0..<60, using: &random) * 3600
            let counted = from..<(from + Int64.random(in: 1..<40, using: &random) * 3600)
            let outside = whole.excluding { counted.contains($0) }
            let inside = Self.state(events.filter { counted.contains($0.1) })
            var merged = outside ?? inside!
            if let inside, outside != nil { merged.formUnion(inside) }
            #expect(merged == whole, "\(events) counting \(counted)")
            if events.allSatisfy({ counted.contains($0.1) }) { #expect(outside == nil, "\(events) counting \(counted)") }
            // It holds nothing of the counted instants: those are counted again.
            let kept = [outside?.start, outside?.firstView, outside?.firstSection, outside?.firstClick].compactMap { $0 }
            #expect(kept.allSatisfy { !counted.contains($0) }, "\(events) counting \(counted): \(String(describing: outside))")
            if outside != nil && inside != nil { split += 1 }
        }
        #expect(split > 500, "\(split) sessions split")
    }

    /// A session is counted on the local quarter hour (and day) of its first view in its artist's zone: Kathmandu's
    /// (+5:45) puts a view at 20:00 UTC on the next local day, at 01:45.
    @Test func theFunnelIsCountedOnTheArtistsLocalDayOfTheFirstView() throws {
        var delta = InternedDelta(zones: ArtistZones(["artist-1": try ZoneRulesTests.rules("Asia/Kathmandu")]))
        let view = RFC3339.parseInstant("2026-10-01T20:00:00Z")!.seconds
        delta.addFunnel(artistID: "artist-1", portfolioID: "pf-main", at: view, FunnelCounts(sessions: 1))
        delta.addFunnel(artistID: "artist-2", portfolioID: "pf-main", at: view, FunnelCounts(sessions: 1))
        let quarters = Dictionary(uniqueKeysWithValues: delta.funnel.rows.map { (delta.values[$0.0.artist], $0.0.quarter) })
        #expect(quarters["artist-1"] == (view + 5 * 3600 + 45 * 60) / 900 && quarters["artist-2"] == view / 900)
        let day = RFC3339.parseDate("2026-10-02")!.daysSinceEpoch
        #expect(ArtistDayRows(delta).days(of: Cube.all.first { $0.table == "page_funnel_by_artist_day" }!).map { "\(delta.values[$0.artist]) \($0.day)" }.sorted()
                == ["artist-1 \(day)", "artist-2 \(day - 1)"])
    }

    /// A delta collects each page event's session (one with a `session_id`) by artist and portfolio, merged.
    @Test func aDeltaHoldsTheSessionsOfItsPageEvents() {
        let at = Timestamp(seconds: 1_790_000_000)
        func page(_ id: String, _ kind: PageEvent.Kind, _ seconds: Int64, session: String?, portfolio: String = "pf-main") -> Event {
            .page(PageEvent(eventID: id, occurredAt: Timestamp(seconds: at.seconds + seconds), artistID: "artist-1", visitorID: "v-1",
                            portfolioID: portfolio, kind: kind, sessionID: session))
        }
        let delta = InternedDelta(events: [
            page("e1", .sectionView(sectionID: "tour"), 30, session: "s-1"),
            page("e2", .portfolioView(category: nil), 60, session: "s-1"),
            page("e3", .ctaClick(actionType: "pre_save"), 90, session: "s-1"),
            page("e4", .portfolioView(category: nil), 0, session: "s-1", portfolio: "pf-tour"),
            page("e5", .portfolioView(category: nil), 0, session: nil),
        ])
        let sessions = Dictionary(uniqueKeysWithValues: delta.sessions.rows.map { cell, state in
            ("\(delta.values[cell.portfolio])|\(delta.sessionIDs[cell.session])", state)
        })
        #expect(sessions.count == 2)
        // Session ids are kept apart from the values memory's symbols take in.
        #expect(!(0..<UInt32(delta.values.count)).contains { delta.values[$0] == "s-1" } && delta.sessionIDs.count == 1)
        #expect(sessions["pf-main|s-1"] == FunnelSession(start: at.seconds + 30, firstView: at.seconds + 60, firstSection: at.seconds + 30, firstClick: at.seconds + 90))
        #expect(sessions["pf-tour|s-1"]?.counted?.counts == FunnelCounts(sessions: 1))
        let counted = delta.withSessionsCounted()
        #expect(counted.funnel.rows.reduce(FunnelCounts()) { $0 + $1.1 } == FunnelCounts(sessions: 2, withSection: 1, withClick: 1))
    }
}
