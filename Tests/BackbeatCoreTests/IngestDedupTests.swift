import BackbeatCore
import BackbeatTestSupport
import Testing

/// Resent events through the ingest's ledger: counted once within the window, rejected when the fields differ,
/// counted (and told apart) beyond it; the ids each batch remembered go with the batch, come back after a failed
/// flush, and, stored and loaded by the partition's next owner, keep telling resends apart.
@Suite struct IngestDedupTests {
    static let partition = TopicPartition(topic: "social", partition: 0)
    static let now = RFC3339.parseTimestamp("2026-06-20T12:00:00Z")!
    static let spans = DedupSpans(stream: 48 * 3600, revenue: 30 * 86400, social: 10 * 86400)

    /// A social event: `count` likes of artist a1 at `at`, written with its keys in the order given by `reordered`.
    static func social(_ id: String, at: String, count: Int = 1, reordered: Bool = false, ignored: String? = nil) -> [UInt8] {
        var fields = [
            #""event_id":"\#(id)""#, #""type":"social""#, #""occurred_at":"\#(at)""#, #""artist_id":"a1""#,
            #""platform":"x""#, #""action":"like""#, #""count":\#(count)"#,
        ]
        if reordered { fields.reverse() }
        if let ignored { fields.append(#""client":"\#(ignored)""#) }
        return Array("{\(fields.joined(separator: ","))}".utf8)
    }

    /// Feeds `values` as the partition's next offsets from `first`; answers each outcome.
    static func feed(_ values: [[UInt8]], from first: Int64, into ledger: inout IngestLedger) -> [IngestLedger.Outcome] {
        values.enumerated().map { index, value in
            ledger.ingest(ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: first + Int64(index)), key: nil, value: value), now: now)
        }
    }

    /// The likes a batch counts.
    static func likes(_ batch: FlushBatch?) -> Int64 {
        batch.map { $0.mergedDelta.rollupDelta.social.values.reduce(0) { $0 + $1 } } ?? 0
    }

    @Test func aResendIsCountedOnceAndAnotherEventUnderItsIDIsRejected() throws {
        var ledger = IngestLedger(dedup: Self.spans)
        ledger.assign(Self.partition, storedOffset: nil)
        let outcomes = Self.feed([
            Self.social("e1", at: "2026-06-20T10:00:00Z", count: 3),
            Self.social("e1", at: "2026-06-20T11:00:00+01:00", count: 3, reordered: true, ignored: "retry"),  // the same instant and fields
            Self.social("e2", at: "2026-06-20T10:05:00Z", count: 5),
            Self.social("e1", at: "2026-06-20T10:00:00Z", count: 4),  // another event under e1's id
            Self.social("e2", at: "2026-06-20T10:05:00Z", count: 5),
        ], from: 0, into: &ledger)
        #expect(outcomes == [.accepted, .duplicate, .accepted, .rejected(.conflictingEventID), .duplicate])
        let taken = ledger.takeBatch()
        let batch = try #require(taken)
        #expect(Self.likes(batch) == 8)
        #expect(batch.parts[0].newOffset == 5)
        let rejected = batch.rejected
        #expect(rejected.map(\.position.offset) == [3])
        #expect(rejected.first?.rejection.detail.contains("e1") == true)
        #expect(batch.parts[0].remembered.count == 2)
        #expect(batch.parts[0].newestEventTime == RFC3339.parseTimestamp("2026-06-20T10:05:00Z")!.seconds)
    }

    @Test func anEventOlderThanTheWindowIsCountedAndToldApart() {
        var ledger = IngestLedger(dedup: Self.spans)
        ledger.assign(Self.partition, storedOffset: nil)
        let outcomes = Self.feed([
            Self.social("old", at: "2026-06-01T10:00:00Z"),
            Self.social("new", at: "2026-06-20T10:00:00Z"),
            Self.social("old", at: "2026-06-01T10:00:00Z"),  // 19 days behind the newest: beyond the 10-day window
            Self.social("late", at: "2026-06-12T10:00:00Z"),  // 8 days behind: within it
            Self.social("late", at: "2026-06-12T10:00:00Z"),
        ], from: 0, into: &ledger)
        #expect(outcomes == [.accepted, .accepted, .acceptedBeyondWindow, .accepted, .duplicate])
        var totals = IngestTotals()
        for outcome in outcomes { totals.count(outcome) }
        #expect(totals.accepted == 4 && totals.beyondWindow == 1 && totals.duplicates == 1)
    }

    /// The state counts each topic apart (the conflicts among the rejected), knows the newest event time counted on
    /// each partition (not a duplicate's, not a rejected event's) and when the last flush committed.
    @Test func theStateCountsPerTopicAndKnowsHowFreshEachPartitionIs() throws {
        var state = IngestState(dedup: Self.spans)
        let streams = TopicPartition(topic: "streams", partition: 3)
        state.assigned([Self.partition, streams])
        let planned = state.nextStoredOffsetRead()
        state.storedOffsetsRead(try #require(planned).read, [:])
        for seek in state.takeSeeks() { state.sought(seek) }
        #expect(state.ledger.newestEventTimes == [Self.partition: nil, streams: nil])
        #expect(state.lastFlushCommittedAt == nil)

        let values = [
            Self.social("e1", at: "2026-06-20T10:00:00Z"),
            Self.social("e1", at: "2026-06-20T10:00:00Z"),
            Self.social("e1", at: "2026-06-20T11:30:00Z", count: 2),  // a conflict, newer than anything counted
            Self.social("e2", at: "2026-06-20T09:00:00Z"),
            Array("{not json".utf8),
        ]
        let social = values.enumerated().map { ConsumedMessage(position: MessagePosition(topicPartition: Self.partition, offset: Int64($0.offset)), key: nil, value: $0.element) }
        let stream = ConsumedMessage(position: MessagePosition(topicPartition: streams, offset: 0), key: nil, value: Array("""
            {"event_id":"s1","type":"stream","occurred_at":"2026-06-19T08:00:00Z","artist_id":"a1","track_id":"t1","platform":"spotify","listener_id":"l1","country":"SE","duration_ms":1000}
            """.utf8))
        _ = state.consumed(social + [stream], now: Self.now)

        #expect(state.topicTotals["social"] == {
            var totals = IngestTotals()
            for outcome: IngestLedger.Outcome in [.accepted, .duplicate, .rejected(.conflictingEventID), .accepted, .rejected(.invalidJSON)] { totals.count(outcome) }
            return totals
        }())
        #expect(state.topicTotals["social"]?.conflicts == 1 && state.topicTotals["streams"]?.accepted == 1)
        #expect(state.ledger.newestEventTimes == [
            Self.partition: RFC3339.parseTimestamp("2026-06-20T10:00:00Z")!.seconds,
            streams: RFC3339.parseTimestamp("2026-06-19T08:00:00Z")!.seconds,
        ])

        let started = state.flushStarted()
        _ = try #require(started)
        state.flushCommitted(at: Self.now)
        #expect(state.lastFlushCommittedAt == Self.now && state.flushesCommitted == 1)
        // The newest event time stays with the partition after the flush.
        #expect(state.ledger.newestEventTimes[Self.partition] == RFC3339.parseTimestamp("2026-06-20T10:00:00Z")!.seconds)
    }

    @Test func withoutDedupEveryResendIsCounted() {
        var ledger = IngestLedger()
        ledger.assign(Self.partition, storedOffset: nil)
        let value = Self.social("e1", at: "2026-06-20T10:00:00Z", count: 2)
        #expect(Self.feed([value, value], from: 0, into: &ledger) == [.accepted, .accepted])
        #expect(Self.likes(ledger.takeBatch()) == 4)
    }

    @Test func aFailedFlushPutsItsRememberedIDsBack() throws {
        var ledger = IngestLedger(dedup: Self.spans)
        ledger.assign(Self.partition, storedOffset: nil)
        _ = Self.feed([Self.social("e1", at: "2026-06-20T10:00:00Z")], from: 0, into: &ledger)
        let takenFirst = ledger.takeBatch()
        let failed = try #require(takenFirst)
        _ = Self.feed([Self.social("e2", at: "2026-06-20T10:01:00Z"), Self.social("e1", at: "2026-06-20T10:00:00Z")], from: 1, into: &ledger)
        ledger.restore(failed)
        let taken = ledger.takeBatch()
        let batch = try #require(taken)
        #expect(batch.parts[0].remembered.map(\.fingerprint) == (failed.parts[0].remembered + batch.parts[0].remembered.suffix(1)).map(\.fingerprint))
        #expect(batch.parts[0].remembered.count == 2)
        #expect(Self.likes(batch) == 2)
    }

    @Test func overTheBudgetTheIDsNearestTheirExpiryAreForgottenAndCountedAgain() {
        var ledger = IngestLedger(dedup: Self.spans, dedupBudgetIDs: 20)
        ledger.assign(Self.partition, storedOffset: nil)
        // Ten ids in each of three hours: thirty ids, over the budget of twenty.
        let values = (0..<30).map { Self.social("b\($0)", at: "2026-06-20T1\($0 / 10):00:00Z") }
        #expect(Self.feed(values, from: 0, into: &ledger).allSatisfy { $0 == .accepted })
        #expect(ledger.dedupIDCount <= 20 && ledger.idsForgottenEarly == 30 - ledger.dedupIDCount)
        // The first hour's ids were forgotten: a resend of one is counted again; the last hour's are remembered.
        #expect(Self.feed([values[0], values[29]], from: 30, into: &ledger) == [.accepted, .duplicate])
    }

    /// What one owner's flushes stored, loaded by the next owner through the state's read of stored offsets: the
    /// resends it consumes again, and those sent after, are counted once.
    @Test func theNextOwnerLoadsTheStoredWindowAndCountsResendsOnce() throws {
        var first = IngestLedger(dedup: Self.spans)
        first.assign(Self.partition, storedOffset: nil)
        var stored: [[UInt8]] = []
        var newest: Int64?
        for round in 0..<3 {
            _ = Self.feed((0..<4).map { Self.social("r\(round)-\($0)", at: "2026-06-20T1\(round):0\($0):00Z") }, from: Int64(round * 4), into: &first)
            let taken = first.takeBatch()
            let part = try #require(taken).parts[0]
            stored.append(DedupWindow.encode(part.remembered))
            newest = part.newestEventTime
        }
        let loaded = DedupWindow(loading: try stored.flatMap { try DedupWindow.decode($0) }, newestEventTime: newest)
        #expect(loaded.count == 12)

        var state = IngestState(dedup: Self.spans)
        state.assigned([Self.partition])
        let planned = state.nextStoredOffsetRead()
        let read = try #require(planned).read
        state.storedOffsetsRead(read, [Self.partition: 12], windows: [Self.partition: loaded])
        for seek in state.takeSeeks() { state.sought(seek) }
        let messages = [
            Self.social("r1-2", at: "2026-06-20T11:02:00Z"),  // a resend of an event the first owner counted
            Self.social("r3-0", at: "2026-06-20T13:00:00Z"),
            Self.social("r3-0", at: "2026-06-20T13:00:00Z"),
            Self.social("r0-1", at: "2026-06-20T10:01:00Z", count: 9),  // another event under a counted id
        ].enumerated().map { ConsumedMessage(position: MessagePosition(topicPartition: Self.partition, offset: 12 + Int64($0)), key: nil, value: $1) }
        var outcomes: [IngestLedger.Outcome] = []
        _ = state.consumed(messages, now: Self.now) { outcomes.append($1) }
        #expect(outcomes == [.duplicate, .accepted, .duplicate, .rejected(.conflictingEventID)])
        let totals = state.topicTotals[Self.partition.topic]
        #expect(totals?.duplicates == 2 && totals?.accepted == 1 && totals?.rejected == 1 && totals?.conflicts == 1)
        #expect(Self.likes(state.flushStarted()?.batch) == 1)
    }
}
