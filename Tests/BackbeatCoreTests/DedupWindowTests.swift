import BackbeatCore
import Testing

/// The dedup window and the fingerprints it compares: a resend is the same event however its JSON is written, a
/// changed payload under a seen id is a conflict, and ids are forgotten by event time, never sooner than their span.
@Suite struct DedupWindowTests {
    static let now = RFC3339.parseTimestamp("2026-06-15T12:00:00Z")!
    static let hours48: Int64 = 48 * 3600

    static func fingerprint(_ json: String) throws -> EventFingerprint {
        let value = Array(json.utf8)
        let decoded = EventDecoder.decodeRecord(value, now: now)
        let record = try decoded.get()
        return value.withUnsafeBytes { record.fingerprint(in: $0) }
    }

    static let play = #"{"event_id":"e-1","type":"stream","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","track_id":"t1","platform":"spotify","listener_id":"l1","country":"SE","duration_ms":1000}"#

    @Test func aResendIsTheSameEventHoweverItsJSONIsWritten() throws {
        let first = try Self.fingerprint(Self.play)
        let reordered = try Self.fingerprint(#"{"platform":"spotify","track_id":"t1","type":"stream","event_id":"e-1","artist_id":"a1","occurred_at":"2026-06-15T10:00:00Z","duration_ms":1000,"country":"SE","listener_id":"l1","client":"ios 17"}"#)
        let escaped = try Self.fingerprint(#"{"event_id":"e-1","type":"stream","occurred_at":"2026-06-15T10:00:00Z","artist_id":"\u0061\u0031","track_id":"t1","platform":"spotify","listener_id":"l1","country":"SE","duration_ms":1000}"#)
        #expect(reordered == first, "keys in another order, a field Backbeat ignores")
        #expect(escaped == first, "a string written with escapes")

        let otherTrack = try Self.fingerprint(Self.play.replacingOccurrences(of: #""track_id":"t1""#, with: #""track_id":"t2""#))
        #expect(otherTrack.id == first.id && otherTrack.payload != first.payload)
        let noListener = try Self.fingerprint(Self.play.replacingOccurrences(of: #","listener_id":"l1""#, with: ""))
        #expect(noListener.payload != first.payload, "an absent field differs from a present one")
        let later = try Self.fingerprint(Self.play.replacingOccurrences(of: "10:00:00Z", with: "10:00:01Z"))
        #expect(later.payload != first.payload)
        let social = try Self.fingerprint(#"{"event_id":"e-1","type":"social","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","platform":"spotify","action":"like"}"#)
        #expect(social.id == first.id && social.payload != first.payload, "another family under the same id")
        let otherID = try Self.fingerprint(Self.play.replacingOccurrences(of: "e-1", with: "e-2"))
        #expect(otherID.id != first.id && otherID.payload == first.payload)
    }

    /// Fingerprints are stored with the offsets: they must be the same in every process and every version. These
    /// values were computed once; a change of the hash or of the fields it reads must change them on purpose (and
    /// say what becomes of the windows already stored).
    @Test func fingerprintsAreTheSameInEveryProcess() throws {
        let first = try Self.fingerprint(Self.play)
        #expect(first == EventFingerprint(id: Self.pinnedID, payload: Self.pinnedPayload), "\(first.id) \(first.payload)")
    }

    /// Strings are hashed 8 bytes at a time: a difference in any byte of a long id, in its padded last word or in its
    /// length tells the ids apart.
    @Test func everyByteOfALongIDCounts() throws {
        let long = "0123456789abcdef-0123456789abcdef-0123"
        let base = try Self.fingerprint(Self.play.replacingOccurrences(of: "e-1", with: long))
        var seen: Set<UInt64> = [base.id]
        for index in long.indices {
            var changed = long
            changed.replaceSubrange(index...index, with: long[index] == "x" ? "y" : "x")
            seen.insert(try Self.fingerprint(Self.play.replacingOccurrences(of: "e-1", with: changed)).id)
        }
        for length in [7, 8, 9, 16, 17] {
            seen.insert(try Self.fingerprint(Self.play.replacingOccurrences(of: "e-1", with: String(long.prefix(length)))).id)
        }
        #expect(seen.count == 1 + long.count + 5)
    }

    /// Version 2 of the stored ids (hashed a word at a time). The id's hash was also computed by a separate Python
    /// implementation of `StableHasher`'s documented steps, which gave the same value.
    static let pinnedID: UInt64 = 1_849_356_358_992_494_525
    static let pinnedPayload: UInt64 = 10_039_020_258_956_474_821

    @Test func aSeenIDIsADuplicateOrAConflictUntilItsSpanHasPassed() {
        var window = DedupWindow()
        let t = Self.now.seconds
        let event = EventFingerprint(id: 1, payload: 10)
        #expect(window.admit(event, occurredAt: t, span: Self.hours48) == .new)
        #expect(window.admit(event, occurredAt: t, span: Self.hours48) == .duplicate)
        #expect(window.admit(EventFingerprint(id: 1, payload: 11), occurredAt: t, span: Self.hours48) == .conflict)
        #expect(window.count == 1)

        // Event time moves on to just before the span has passed: still remembered.
        #expect(window.admit(EventFingerprint(id: 2, payload: 20), occurredAt: t + Self.hours48, span: Self.hours48) == .new)
        #expect(window.admit(event, occurredAt: t, span: Self.hours48) == .duplicate)
        // Past the span, in a later hour: the old event is beyond the window (counted), and its id is forgotten.
        #expect(window.admit(EventFingerprint(id: 3, payload: 30), occurredAt: t + Self.hours48 + 3601, span: Self.hours48) == .new)
        #expect(window.admit(event, occurredAt: t, span: Self.hours48) == .beyondWindow)
        #expect(window.count == 2, "id 1 forgotten, ids 2 and 3 remembered")
        #expect(window.newestEventTime == t + Self.hours48 + 3601)
    }

    @Test func eachFamilyKeepsItsOwnSpanAndLateEventsWithinItAreLookedUp() {
        var window = DedupWindow()
        let t = Self.now.seconds
        let thirtyDays: Int64 = 30 * 86_400
        let revenue = EventFingerprint(id: 7, payload: 70)
        #expect(window.admit(revenue, occurredAt: t, span: thirtyDays) == .new)
        // Ten days of streams later, the revenue event is still remembered; a stream of the first day is not.
        let stream = EventFingerprint(id: 8, payload: 80)
        #expect(window.admit(stream, occurredAt: t, span: Self.hours48) == .new)
        for day in 1...10 {
            #expect(window.admit(EventFingerprint(id: UInt64(100 + day), payload: 0), occurredAt: t + Int64(day) * 86_400, span: Self.hours48) == .new)
        }
        #expect(window.admit(revenue, occurredAt: t, span: thirtyDays) == .duplicate)
        #expect(window.admit(stream, occurredAt: t, span: Self.hours48) == .beyondWindow)
        // A late stream within its span is looked up and remembered.
        let late = EventFingerprint(id: 9, payload: 90)
        #expect(window.admit(late, occurredAt: t + 9 * 86_400, span: Self.hours48) == .new)
        #expect(window.admit(late, occurredAt: t + 9 * 86_400, span: Self.hours48) == .duplicate)
    }

    @Test func memoryIsBoundedByTheSpanNotByTheStream() {
        var window = DedupWindow.unstored
        let t = Self.now.seconds
        // Ten days of one event a minute: a 48-hour window keeps about 48 hours of them.
        for minute in 0..<(10 * 24 * 60) {
            _ = window.admit(EventFingerprint(id: UInt64(minute), payload: 0), occurredAt: t + Int64(minute) * 60, span: Self.hours48)
        }
        // Expired ids go in sweeps, once an eighth of the table is new since the last: at most 8/7 of the span's ids.
        #expect(window.count >= 48 * 60 && window.count <= 49 * 60 * 8 / 7, "\(window.count)")
        #expect(window.byteCount <= window.count * 2 * DedupWindow.bytesPerID, "\(window.byteCount)")
    }
}

/// What a flush stores of the window, and the window an owner loads from it.
@Suite struct DedupWindowStorageTests {
    static let t = DedupWindowTests.now.seconds
    static let span = DedupWindowTests.hours48

    @Test func theIDsAddedSinceAFlushAreStoredAndLoadedIntoTheSameWindow() throws {
        var window = DedupWindow()
        for id in 0..<100 { _ = window.admit(EventFingerprint(id: UInt64(id), payload: UInt64(id) * 3), occurredAt: Self.t + Int64(id), span: Self.span) }
        _ = window.admit(EventFingerprint(id: 5, payload: 15), occurredAt: Self.t + 5, span: Self.span)
        let first = window.takeAdded()
        #expect(first.count == 100, "a duplicate adds nothing")
        #expect(window.takeAdded().isEmpty, "taken once")

        // A failed flush puts its ids back ahead of those added since.
        _ = window.admit(EventFingerprint(id: 500, payload: 1), occurredAt: Self.t + 500, span: Self.span)
        window.putBack(first)
        let retried = window.takeAdded()
        #expect(retried.count == 101 && Array(retried.prefix(100)) == first && retried.last?.fingerprint.id == 500)

        let stored = DedupWindow.encode(retried)
        #expect(stored.count == 1 + 101 * 24)
        let decoded = try DedupWindow.decode(stored)
        #expect(decoded == retried)

        // Loaded by the next owner: the same verdicts as the window that stored them.
        var loaded = DedupWindow(loading: decoded, newestEventTime: window.newestEventTime)
        #expect(loaded.count == window.count)
        #expect(loaded.admit(EventFingerprint(id: 7, payload: 21), occurredAt: Self.t + 7, span: Self.span) == .duplicate)
        #expect(loaded.admit(EventFingerprint(id: 7, payload: 22), occurredAt: Self.t + 7, span: Self.span) == .conflict)
        #expect(loaded.admit(EventFingerprint(id: 1000, payload: 0), occurredAt: Self.t + 7, span: Self.span) == .new)
    }

    @Test func loadingLeavesOutWhatExpiredAndRefusesWhatIsNotAWindow() throws {
        let old = DedupWindow.Remembered(fingerprint: EventFingerprint(id: 1, payload: 1), expiresAt: Self.t)
        let recent = DedupWindow.Remembered(fingerprint: EventFingerprint(id: 2, payload: 2), expiresAt: Self.t + Self.span)
        let loaded = DedupWindow(loading: [old, recent], newestEventTime: Self.t + 1)
        #expect(loaded.count == 1)

        let stored = DedupWindow.encode([old, recent])
        #expect(throws: DedupWindow.StorageError.self) { try DedupWindow.decode([]) }
        #expect(throws: DedupWindow.StorageError.self) { try DedupWindow.decode(Array(stored.dropLast())) }
        #expect(throws: DedupWindow.StorageError.self) { try DedupWindow.decode([DedupWindow.storageVersion &+ 1] + stored.dropFirst()) }
        #expect(try DedupWindow.decode([DedupWindow.storageVersion]).isEmpty)
    }
}
