import BackbeatCore
import BackbeatTestSupport
import Foundation
import Testing

/// The interned rollup (`InternedDelta`, fed from `EventRecord`s) adds exactly what the string-keyed `RollupDelta`
/// adds from the same lines' events, and its dictionary gives one id per distinct value.
struct InternedDeltaTests {
    static let start = CivilDate(year: 2026, month: 10, day: 1)
    static let now = Timestamp(seconds: (start.daysSinceEpoch + 40) * 86_400)

    /// Values written with escapes, non-ASCII text and absent optional fields, beside the generator's plain ones.
    static let handWritten = [
        #"{"event_id":"e\u002d1","type":"stream","occurred_at":"2026-10-02T10:00:00Z","artist_id":"artist\u002d0001","track_id":"artist-0001:track-01","platform":"spotify","listener_id":"l\u00e9-1","country":"FR"}"#,
        #"{"event_id":"e-2","type":"stream","occurred_at":"2026-10-02T10:59:59.999999Z","artist_id":"artist-0001","track_id":"artist-0001:track-01","platform":"spotify","listener_id":"lé-1","country":"FR","age_range":"25-34","gender":"female","duration_ms":10}"#,
        #"{"event_id":"é","type":"stream","occurred_at":"2026-10-02T11:00:00+02:00","artist_id":"artist-0002","track_id":"t","platform":"sp\u006ftify"}"#,
        #"{"event_id":"e-4","type":"revenue","occurred_at":"2026-10-03T00:00:00Z","artist_id":"artist-0001","source":"live","amount":"12.50","currency":"EUR"}"#,
        #"{"event_id":"e-5","type":"revenue","occurred_at":"2026-10-03T00:30:00Z","artist_id":"artist-0001","source":"live","amount":1e1,"currency":"EUR","platform":"","track_id":null}"#,
        #"{"event_id":"e-6","type":"social","occurred_at":"2026-10-03T00:30:00Z","artist_id":"artist-0003","platform":"tiktok","action":"like","count":5}"#,
        #"{"event_id":"e-7","type":"social","occurred_at":"2026-10-03T00:31:00Z","artist_id":"artist-0003","platform":"tiktok","action":"lik\u0065"}"#,
    ]

    @Test func internedRowsAreTheRowsOfTheDecodedEvents() throws {
        var generator = EventGenerator(.init(seed: 7, artists: 12, days: 20, start: Self.start, invalidFraction: 0.1, tracksPerArtist: 8, pageFraction: 0.2))
        let values = (0..<20_000).map { _ in generator.next().value ?? [] } + Self.handWritten.map { Array($0.utf8) }
        var interned = InternedDelta()
        var expected = RollupDelta()
        var rejected = 0
        for value in values {
            value.withUnsafeBytes { bytes in
                switch EventDecoder.decodeRecord(bytes: bytes, now: Self.now) {
                case .success(let record):
                    interned.add(record, in: bytes)
                    let event = record.event(in: bytes)
                    #expect(EventDecoder.decode(bytes: bytes, now: Self.now) == .success(event))
                    expected.add(event)
                case .failure(let rejection):
                    #expect(EventDecoder.decode(bytes: bytes, now: Self.now) == .failure(rejection))
                    rejected += 1
                }
            }
        }
        let delta = interned.rollupDelta
        #expect(rejected > 1_000 && !expected.revenue.isEmpty && !expected.social.isEmpty)
        #expect(delta.streams == expected.streams)
        #expect(delta.revenue == expected.revenue)
        #expect(delta.social == expected.social)
        #expect(delta.page == expected.page && !expected.page.isEmpty)
        #expect(delta.artistListeners == expected.artistListeners)
        #expect(delta.trackListeners == expected.trackListeners)
        #expect(delta.artistVisitors == expected.artistVisitors && !expected.artistVisitors.isEmpty)
        #expect(delta.pageVisitors == expected.pageVisitors && expected.pageVisitors.count > expected.artistVisitors.count)
        #expect(delta.rowCount == expected.rowCount)
    }

    /// What a delta moves of the answers' stamps: each artist of its events, in each event family, on the span of
    /// the (UTC) days of those events, as the decoded events give them one by one.
    @Test func artistDaysAreEachArtistsDaysInEachFamily() {
        var generator = EventGenerator(.init(seed: 5, artists: 40, days: 9, start: Self.start, invalidFraction: 0.05, tracksPerArtist: 4, pageFraction: 0.3))
        var delta = InternedDelta()
        var expected = ArtistDays()
        for _ in 0..<8_000 {
            guard let value = generator.next().value else { continue }
            value.withUnsafeBytes { bytes in
                guard case .success(let record) = EventDecoder.decodeRecord(bytes: bytes, now: Self.now) else { return }
                delta.add(record, in: bytes)
                let event = record.event(in: bytes)
                let family: ArtistVersions.Families = switch event {
                case .stream: .streams
                case .revenue: .revenue
                case .social: .social
                case .page: .page
                }
                let day = event.occurredAt.daysSinceEpoch
                expected.insert(event.artistID, family, days: day...day)
            }
        }
        #expect(!expected.isEmpty)
        #expect(delta.artistDays == expected)
    }

    @Test func mergingDeltasAddsWhatOneDeltaOfAllTheLinesAdds() {
        var generator = EventGenerator(.init(seed: 11, artists: 6, days: 5, start: Self.start, invalidFraction: 0.05, tracksPerArtist: 4, pageFraction: 0.2))
        let values = (0..<6_000).map { _ in generator.next().value ?? [] }
        func delta(_ values: ArraySlice<[UInt8]>) -> InternedDelta {
            var delta = InternedDelta()
            for value in values {
                value.withUnsafeBytes { bytes in
                    if case .success(let record) = EventDecoder.decodeRecord(bytes: bytes, now: Self.now) { delta.add(record, in: bytes) }
                }
            }
            return delta
        }
        // The second part meets values in another order, so its ids differ from the first's.
        var merged = delta(values[3_000...])
        merged.merge(delta(values[..<3_000]))
        let whole = delta(values[...]).rollupDelta
        let sum = merged.rollupDelta
        #expect(sum.streams == whole.streams && sum.revenue == whole.revenue && sum.social == whole.social)
        #expect(sum.artistListeners == whole.artistListeners && sum.trackListeners == whole.trackListeners)
        #expect(!whole.streams.isEmpty && !whole.trackListeners.isEmpty)
    }

    /// With zones, an artist's rows are the rows of its events moved to local time, as Foundation's own zone data
    /// (ICU's, not the database files `ZoneRules` reads) gives the offset: across Los Angeles' change of 2026-11-01,
    /// +5:30, +5:45 and Chatham's +13:45; an artist without a zone stays in UTC.
    @Test func zonedArtistsRowsAreTheirEventsInLocalTime() throws {
        let zoned = ["artist-0001": "America/Los_Angeles", "artist-0002": "Asia/Kolkata", "artist-0003": "Asia/Kathmandu", "artist-0004": "Pacific/Chatham"]
        let zones = ArtistZones(try zoned.mapValues { try ZoneRulesTests.rules($0) })
        let start = CivilDate(year: 2026, month: 10, day: 20)
        var generator = EventGenerator(.init(seed: 5, artists: 6, days: 20, start: start, invalidFraction: 0, tracksPerArtist: 4, pageFraction: 0.2))
        let values = (0..<20_000).map { _ in generator.next().value ?? [] }
        var interned = InternedDelta(zones: zones)
        var expected = RollupDelta()
        let now = Timestamp(seconds: (start.daysSinceEpoch + 30) * 86_400)
        for value in values {
            value.withUnsafeBytes { bytes in
                guard case .success(let record) = EventDecoder.decodeRecord(bytes: bytes, now: now) else { return }
                interned.add(record, in: bytes)
                var event = record.event(in: bytes)
                if let zone = zoned[event.artistID].flatMap(TimeZone.init(identifier:)) {
                    let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(event.occurredAt.seconds))))
                    event.move(by: offset)
                }
                expected.add(event)
            }
        }
        let delta = interned.rollupDelta
        #expect(Set(expected.streams.keys.map(\.artistID)).count == 6)
        #expect(delta.streams == expected.streams)
        #expect(delta.revenue == expected.revenue)
        #expect(delta.social == expected.social)
        #expect(delta.artistListeners == expected.artistListeners)
        #expect(delta.trackListeners == expected.trackListeners)
        // Only days are checked above for listeners: a Kathmandu play at 18:15Z counts on the next local day.
        var kathmandu = InternedDelta(zones: zones)
        let late = Array(#"{"event_id":"k","type":"stream","occurred_at":"2026-10-25T18:15:00Z","artist_id":"artist-0003","track_id":"t","platform":"p","listener_id":"l"}"#.utf8)
        late.withUnsafeBytes { bytes in
            if case .success(let record) = EventDecoder.decodeRecord(bytes: bytes, now: now) { kathmandu.add(record, in: bytes) }
        }
        #expect(kathmandu.rollupDelta.artistListeners.keys.map(\.day) == [CivilDate(year: 2026, month: 10, day: 26).daysSinceEpoch])
        #expect(kathmandu.rollupDelta.streams.keys.map(\.hour.start) == [Timestamp(seconds: CivilDate(year: 2026, month: 10, day: 26).daysSinceEpoch * 86_400)])
    }

    @Test func escapedAndPlainSpellingsOfAValueShareAnID() throws {
        var interned = InternedDelta()
        for value in Self.handWritten.prefix(2) {
            let bytes = Array(value.utf8)
            bytes.withUnsafeBytes { bytes in
                guard case .success(let record) = EventDecoder.decodeRecord(bytes: bytes, now: Self.now) else {
                    Issue.record("\(value) was rejected")
                    return
                }
                interned.add(record, in: bytes)
            }
        }
        // Same artist, track and hour; the dimensions differ (age and gender), so two rows and one listener.
        #expect(interned.streams.count == 2)
        #expect(Set(interned.streams.keys.map(\.artist)).count == 1)
        #expect(interned.rollupDelta.streams.keys.allSatisfy { $0.artistID == "artist-0001" })
        #expect(interned.listeners.artists.map { $0.value.cardinality.rounded() } == [1])
    }

    @Test func aDictionaryGivesDenseIDsInOrderOfFirstUse() {
        var dictionary = ValueDictionary()
        let texts = (0..<5_000).map { "value-\($0 * 7919 % 5_000)" } + [""]
        for (index, text) in texts.enumerated() {
            #expect(dictionary.id(text) == UInt32(index))
        }
        for (index, text) in texts.enumerated().reversed() {
            #expect(dictionary.id(text) == UInt32(index), "an existing value keeps its id as the table grows")
            #expect(dictionary[UInt32(index)] == text)
        }
        #expect(dictionary.count == texts.count)
        let bytes = Array("value-17".utf8)
        #expect(bytes.withUnsafeBytes { dictionary.id($0) } == dictionary.id("value-17"))
    }

    @Test(.seeded, arguments: [0, 1, HyperLogLog.explicitLimit, HyperLogLog.explicitLimit + 1, 5_000])
    func aSketchOfSortedHashesIsTheSketchOfTheirAdds(count: Int) {
        var random = TestRandom(seed: TestRandom.seed, stream: "sorted hashes \(count)")
        let hashes = (0..<count).map { _ in Int64.random(in: .min ... .max, using: &random) }
        var added = HyperLogLog()
        for hash in hashes { added.add(hash: hash) }
        #expect(HyperLogLog(sortedDistinctHashes: Array(Set(hashes)).sorted()) == added)
    }
}

extension Event {
    /// The same event `seconds` later.
    mutating func move(by seconds: Int64) {
        switch self {
        case .stream(var event):
            event.occurredAt = event.occurredAt + seconds
            self = .stream(event)
        case .revenue(var event):
            event.occurredAt = event.occurredAt + seconds
            self = .revenue(event)
        case .social(var event):
            event.occurredAt = event.occurredAt + seconds
            self = .social(event)
        case .page(var event):
            event.occurredAt = event.occurredAt + seconds
            self = .page(event)
        }
    }
}
