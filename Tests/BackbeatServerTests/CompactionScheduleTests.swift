@testable import BackbeatServer
import Testing

/// When a periodic compaction round yields to a catching-up ingest.
@Suite struct CompactionScheduleTests {
    let start = ContinuousClock.now

    @Test func aRoundRunsWhenTheIngestIsNotBehind() {
        let schedule = CompactionService.Schedule(maximumDeferral: .seconds(60), lastRound: start)
        #expect(!schedule.defers(at: start + .seconds(5), ingestIsCatchingUp: false))
    }

    @Test func aRoundYieldsToACatchUpAtMostTheMaximumDeferral() {
        var schedule = CompactionService.Schedule(maximumDeferral: .seconds(60), lastRound: start)
        #expect(schedule.defers(at: start + .seconds(5), ingestIsCatchingUp: true))
        #expect(schedule.defers(at: start + .seconds(59), ingestIsCatchingUp: true))
        #expect(!schedule.defers(at: start + .seconds(60), ingestIsCatchingUp: true), "a round runs 60 s after the last one, behind or not")
        // The deferral counts from the last round.
        schedule.lastRound = start + .seconds(61)
        #expect(schedule.defers(at: start + .seconds(66), ingestIsCatchingUp: true))
        #expect(!schedule.defers(at: start + .seconds(121), ingestIsCatchingUp: true))
    }
}
