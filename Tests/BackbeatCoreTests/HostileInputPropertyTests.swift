import BackbeatCore
import BackbeatTestSupport
import Testing

/// Properties of validation under generated hostile input: whatever a producer sends, the ledger answers accepted
/// or rejected with a documented reason (never a trap), records each rejection once at its position, and the valid
/// messages around a mutant are all counted.
struct HostileInputPropertyTests {
    static let start = CivilDate(year: 2026, month: 10, day: 1)
    /// A consumption time after every generated event.
    static let now = Timestamp(seconds: (start.daysSinceEpoch + 12) * 86_400)
    static let partition = TopicPartition(topic: "streams", partition: 0)

    @Test(.seeded) func everyMutantIsAnsweredAndItsNeighboursCounted() {
        var random = TestRandom()
        for _ in 0..<2_000 {
            let mutation = HostileMutation.allCases.randomElement(using: &random)!
            let eventSeed = Int.random(in: 0...5_000, using: &random)
            let position = Int.random(in: 0...1_000_000, using: &random)
            let input = "\(mutation) at \(position) of event seed \(eventSeed)"
            var generator = EventGenerator(.init(seed: UInt64(eventSeed), artists: 5, days: 10, start: Self.start))
            let before = generator.next()
            let victim = generator.next()
            let after = generator.next()
            let mutant = mutation.apply(to: victim.value ?? [], at: position)

            var ledger = IngestLedger()
            ledger.assign(Self.partition, storedOffset: nil)
            var accepted: [Event] = []
            let outcomes = [before.value, mutant, after.value].enumerated().map { offset, value in
                ledger.ingest(
                    ConsumedMessage(position: MessagePosition(topicPartition: Self.partition, offset: Int64(offset)), key: nil, value: value),
                    now: Self.now, onAccepted: { accepted.append($0.event(in: $1)) })
            }

            #expect(outcomes[0] == .accepted && outcomes[2] == .accepted, "valid neighbours of a mutant are counted: \(input)")
            let pending = ledger.takeBatch()?.mergedDelta ?? InternedDelta()
            switch outcomes[1] {
            case .accepted:
                #expect(pending.rejected.isEmpty, "\(input)")
                #expect(accepted.count == 3, "\(input)")
            case .rejected(let reason):
                #expect(Rejection.Reason.all.contains(reason), "\(input)")
                #expect(pending.rejected.map(\.position.offset) == [1], "\(input)")
                #expect(pending.rejected.first?.value == mutant, "the rejected value is kept as consumed: \(input)")
                #expect(pending.rejected.first.map { !$0.rejection.detail.isEmpty } == true, "\(input)")
                #expect(accepted.count == 2, "\(input)")
            case .ignored, .duplicate, .acceptedBeyondWindow:
                Issue.record("a mutant at a new offset of an owned partition without dedup was \(outcomes[1]): \(input)")
            }
            // What the ledger added is exactly the accepted events, no more.
            var expected = RollupDelta()
            for event in accepted { expected.add(event) }
            let added = pending.rollupDelta
            #expect(added.streams == expected.streams && added.revenue == expected.revenue && added.social == expected.social, "\(input)")
        }
    }
}
