import BackbeatCore
import BackbeatTestSupport
import Testing

/// Every rule of the event contract (docs/events.md), with its boundary values.
@Suite struct ValidationTests {
    static let now = RFC3339.parseTimestamp("2026-06-15T12:00:00Z")!

    func decode(_ json: String) -> Result<Event, Rejection> {
        EventDecoder.decode(Array(json.utf8), now: Self.now)
    }

    func reason(_ json: String) -> Rejection.Reason? {
        if case .failure(let rejection) = decode(json) { return rejection.reason }
        return nil
    }

    func stream(_ extra: String = "", replacing: (String, String)? = nil) -> String {
        var base = #"{"event_id":"e1","type":"stream","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","track_id":"t1","platform":"spotify""#
        if let replacing { base = base.replacingFirst(replacing.0, with: replacing.1) }
        return base + extra + "}"
    }

    func revenue(amount: String, extra: String = "") -> String {
        #"{"event_id":"r1","type":"revenue","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","source":"merch","currency":"EUR","amount":"# + amount + extra + "}"
    }

    func social(_ extra: String = "") -> String {
        #"{"event_id":"s1","type":"social","occurred_at":"2026-06-15T10:00:00Z","artist_id":"a1","platform":"tiktok","action":"follow""# + extra + "}"
    }

    @Test func minimalStreamGetsDefaults() throws {
        guard case .success(.stream(let event)) = decode(stream()) else { Issue.record("not accepted"); return }
        #expect(event.country == "ZZ")
        #expect(event.ageRange == .unknown)
        #expect(event.gender == .unknown)
        #expect(event.durationMs == nil)
        #expect(event.isStream)
    }

    @Test func streamThresholdIsThirtySeconds() throws {
        guard case .success(.stream(let skip)) = decode(stream(#","duration_ms":29999"#)),
              case .success(.stream(let play)) = decode(stream(#","duration_ms":30000"#))
        else { Issue.record("not accepted"); return }
        #expect(!skip.isStream)
        #expect(play.isStream)
        #expect(StreamCounters(skip) == StreamCounters(streams: 0, skips: 1, listeningMs: 29999))
        #expect(StreamCounters(play) == StreamCounters(streams: 1, skips: 0, listeningMs: 30000))
    }

    @Test func durationBounds() {
        #expect(reason(stream(#","duration_ms":0"#)) == nil)
        #expect(reason(stream(#","duration_ms":86400000"#)) == nil)
        #expect(reason(stream(#","duration_ms":86400001"#)) == .invalidValue)
        #expect(reason(stream(#","duration_ms":-1"#)) == .invalidValue)
        #expect(reason(stream(#","duration_ms":1.5"#)) == .invalidValue)
        #expect(reason(stream(#","duration_ms":3e4"#)) == .invalidValue)
        #expect(reason(stream(#","duration_ms":"30000""#)) == .invalidType)
    }

    @Test func optionalStreamFields() {
        #expect(reason(stream(#","country":"SE","age_range":"65+","gender":"non_binary","listener_id":"x""#)) == nil)
        #expect(reason(stream(#","country":"se""#)) == .invalidValue)
        #expect(reason(stream(#","country":"SWE""#)) == .invalidValue)
        #expect(reason(stream(#","age_range":"66+""#)) == .invalidValue)
        #expect(reason(stream(#","age_range":"""#)) == .invalidValue)
        #expect(reason(stream(#","gender":"other""#)) == .invalidValue)
        #expect(reason(stream(#","listener_id":"""#)) == .invalidValue)
        #expect(reason(stream(#","listener_id":""# + String(repeating: "x", count: 129) + #"""#)) == .invalidValue)
        #expect(reason(stream(#","country":null"#)) == nil)
        #expect(reason(stream(#","unknown_extra":{"deep":[1,2]}"#)) == nil)
    }

    /// Lengths count characters, however a string is written: plain, escaped, or in multi-byte UTF-8.
    @Test func lengthsCountCharactersNotBytes() {
        func listener(_ written: String) -> Rejection.Reason? {
            reason(stream(#","listener_id":""# + written + #"""#))
        }
        #expect(listener(String(repeating: "a", count: 128)) == nil)
        #expect(listener(String(repeating: "a", count: 129)) == .invalidValue)
        #expect(listener(String(repeating: "é", count: 128)) == nil, "256 bytes, 128 characters")
        #expect(listener(String(repeating: "é", count: 129)) == .invalidValue)
        #expect(listener(String(repeating: "e\u{301}", count: 128)) == nil, "e and a combining accent are one character")
        #expect(listener(String(repeating: #"\u00e9"#, count: 128)) == nil, "escapes count as the character they stand for")
        #expect(listener(String(repeating: #"\u00e9"#, count: 129)) == .invalidValue)
        #expect(listener(String(repeating: #"\""#, count: 128)) == nil)
        func eventID(_ written: String) -> Rejection.Reason? {
            reason(stream(replacing: (#""event_id":"e1""#, #""event_id":""# + written + #"""#)))
        }
        #expect(eventID(String(repeating: "é", count: 128)) == nil)
        #expect(eventID(String(repeating: "a", count: 128)) == nil)
        #expect(eventID(String(repeating: "a", count: 129)) == .invalidValue)
    }

    @Test func enumFieldsMatchTheirCasesHoweverWritten() {
        func demographic(_ field: String, _ written: String) -> Rejection.Reason? {
            reason(stream(",\"\(field)\":\"\(written)\""))
        }
        #expect(demographic("gender", "non_binary") == nil)
        #expect(demographic("gender", #"non\u005fbinary"#) == nil)
        #expect(demographic("gender", "non_binar") == .invalidValue)
        #expect(demographic("gender", "non_binaryy") == .invalidValue)
        #expect(demographic("gender", "Male") == .invalidValue)
        #expect(demographic("gender", "mäle") == .invalidValue)
        #expect(demographic("age_range", "65+") == nil)
        #expect(demographic("age_range", String(repeating: "1", count: 65)) == .invalidValue)
        #expect(reason(stream(replacing: (#""type":"stream""#, #""type":"str\u0065am""#))) == nil)
        #expect(reason(stream(replacing: (#""type":"stream""#, #""type":"streams""#))) == .unknownType)
    }

    @Test func fieldsAreFoundByTheirKeysHoweverWritten() {
        // A key written with escapes names its field.
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist\u005fid":"a1""#))) == nil)
        #expect(reason(stream(replacing: (#""platform":"spotify""#, #""\u0070latform":"x y""#))) == .invalidValue)
        // Keys as long as a field's, or differing in case or by a prefix, name none: the field is missing.
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_ix":"a1""#))) == .missingField)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""Artist_id":"a1""#))) == .missingField)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_i":"a1""#))) == .missingField)
        // Unknown fields, many of them, before the known ones are ignored.
        let unknown = (0..<300).map { #""x\#($0)":\#($0),"# }.joined()
        #expect(reason(stream(replacing: (#"{"event_id""#, "{" + unknown + #""event_id""#))) == nil)
    }

    @Test func identifiersAndSlugs() {
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_id":"A-z0.9_:x""#))) == nil)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_id":"a b""#))) == .invalidValue)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_id":""#+String(repeating: "a", count: 128)+#"""#))) == nil)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_id":""#+String(repeating: "a", count: 129)+#"""#))) == .invalidValue)
        #expect(reason(stream(replacing: (#""platform":"spotify""#, #""platform":"Spotify""#))) == .invalidValue)
        #expect(reason(stream(replacing: (#""platform":"spotify""#, #""platform":""#+String(repeating: "a", count: 33)+#"""#))) == .invalidValue)
        #expect(reason(stream(replacing: (#""track_id":"t1""#, #""track_id":"t/1""#))) == .invalidValue)
        #expect(reason(stream(replacing: (#""event_id":"e1""#, #""event_id":"""#))) == .invalidValue)
        #expect(reason(stream(replacing: (#""event_id":"e1""#, #""event_id":7"#))) == .invalidType)
    }

    @Test func missingAndMistypedFields() {
        #expect(reason(stream(replacing: (#","platform":"spotify""#, ""))) == .missingField)
        #expect(reason(stream(replacing: (#""track_id":"t1","#, ""))) == .missingField)
        #expect(reason(stream(replacing: (#""type":"stream","#, ""))) == .missingField)
        #expect(reason(stream(replacing: (#""type":"stream""#, #""type":"podcast""#))) == .unknownType)
        #expect(reason(stream(replacing: (#""type":"stream""#, #""type":1"#))) == .invalidType)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_id":null"#))) == .missingField)
        #expect(reason(stream(replacing: (#""artist_id":"a1""#, #""artist_id":["a1"]"#))) == .invalidType)
    }

    @Test func amountHasAtMostSixFractionDigits() {
        #expect(reason(revenue(amount: #""1.123456""#)) == nil)
        #expect(reason(revenue(amount: #""1.1234567""#)) == .invalidValue)
        #expect(reason(revenue(amount: "1.123456")) == nil)
        #expect(reason(revenue(amount: "1.1234567")) == .invalidValue)
        #expect(reason(revenue(amount: #""1.0000000""#)) == .invalidValue)
    }

    @Test func amountRangeAndForms() {
        #expect(reason(revenue(amount: #""1000000000000""#)) == nil)
        #expect(reason(revenue(amount: #""-1000000000000.000000""#)) == nil)
        #expect(reason(revenue(amount: #""1000000000000.000001""#)) == .invalidValue)
        #expect(reason(revenue(amount: "1e12")) == nil)
        #expect(reason(revenue(amount: "1.000001e12")) == .invalidValue)
        #expect(reason(revenue(amount: #""1e3""#)) == .invalidValue)  // exponents only in JSON numbers
        #expect(reason(revenue(amount: #""12.""#)) == .invalidValue)
        #expect(reason(revenue(amount: #""abc""#)) == .invalidValue)
        #expect(reason(revenue(amount: "true")) == .invalidType)
        guard case .success(.revenue(let refund)) = decode(revenue(amount: #""-0.5""#)) else { Issue.record("refund rejected"); return }
        #expect(refund.amount == Money(micros: -500_000))
        guard case .success(.revenue(let scaled)) = decode(revenue(amount: "2.5e-3")) else { Issue.record("exponent rejected"); return }
        #expect(scaled.amount == Money(micros: 2_500))
    }

    @Test func revenueFields() {
        #expect(reason(revenue(amount: "1", extra: #","platform":"spotify","track_id":"t1""#)) == nil)
        #expect(reason(revenue(amount: "1").replacingFirst(#""source":"merch""#, with: #""source":"gift""#)) == .invalidValue)
        #expect(reason(revenue(amount: "1").replacingFirst(#""currency":"EUR""#, with: #""currency":"eur""#)) == .invalidValue)
        #expect(reason(revenue(amount: "1").replacingFirst(#","currency":"EUR""#, with: "")) == .missingField)
    }

    @Test func countBounds() {
        #expect(reason(social()) == nil)
        #expect(reason(social(#","count":1"#)) == nil)
        #expect(reason(social(#","count":1000000"#)) == nil)
        #expect(reason(social(#","count":0"#)) == .invalidValue)
        #expect(reason(social(#","count":1000001"#)) == .invalidValue)
        #expect(reason(social().replacingFirst(#""action":"follow""#, with: #""action":"follow2""#)) == .invalidValue)
        guard case .success(.social(let event)) = decode(social()) else { Issue.record("not accepted"); return }
        #expect(event.count == 1)
    }

    @Test func futureTimestampsAllowUpToOneHour() {
        let atLimit = stream(replacing: ("2026-06-15T10:00:00Z", "2026-06-15T13:00:00Z"))
        let beyond = stream(replacing: ("2026-06-15T10:00:00Z", "2026-06-15T13:00:00.000001Z"))
        let ancient = stream(replacing: ("2026-06-15T10:00:00Z", "1999-01-01T00:00:00Z"))
        #expect(reason(atLimit) == nil)
        #expect(reason(beyond) == .futureTimestamp)
        #expect(reason(ancient) == nil)
        #expect(reason(stream(replacing: ("2026-06-15T10:00:00Z", "2026-06-15 10:00:00"))) == .invalidTimestamp)
        #expect(reason(stream(replacing: ("2026-06-15T10:00:00Z", "2026-02-30T10:00:00Z"))) == .invalidTimestamp)
    }

    @Test func timestampsWithOffsetsAreStoredInUTC() {
        guard case .success(let event) = decode(stream(replacing: ("2026-06-15T10:00:00Z", "2026-06-15T12:30:00.5+02:30"))) else {
            Issue.record("not accepted"); return
        }
        #expect(RFC3339.format(event.occurredAt) == "2026-06-15T10:00:00.500000Z")
    }

    @Test func malformedValues() {
        #expect(EventDecoder.decode(nil, now: Self.now).rejectionReason == .emptyValue)
        #expect(EventDecoder.decode([], now: Self.now).rejectionReason == .emptyValue)
        #expect(reason("null") == .notObject)
        #expect(reason("   ") == .invalidJSON)
        #expect(reason("[1]") == .notObject)
        #expect(reason("\"text\"") == .notObject)
        #expect(reason(String(stream().dropLast())) == .invalidJSON)
        #expect(reason(stream() + "x") == .invalidJSON)
        #expect(reason(stream(#","track_id":"t2""#)) == .duplicateField)
        #expect(EventDecoder.decode([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], now: Self.now).rejectionReason == .invalidJSON)
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(reason(stream(#","x":"# + deep)) == .invalidJSON)
        #expect(reason(stream(#","x":01"#)) == .invalidJSON)
    }

    /// A key given twice makes an event ambiguous, whichever field it names (or none) and however it is written; the
    /// rejection names the first member that repeats an earlier key.
    @Test func everyRepeatedKeyIsRejected() {
        func detail(_ json: String) -> String? {
            if case .failure(let rejection) = decode(json), rejection.reason == .duplicateField { return rejection.detail }
            return nil
        }
        let full = [
            stream(#","listener_id":"l1","country":"SE","age_range":"65+","gender":"male","duration_ms":30000"#),
            revenue(amount: #""1.5""#, extra: #","platform":"spotify","track_id":"t1""#),
            social(#","count":2,"post_id":"p1""#),
        ]
        for event in full {
            // Each member of the event, given again at the end.
            let object = event.dropFirst().dropLast()
            let members = object.split(separator: ",").map(String.init)
            for member in members {
                let key = String(member.split(separator: ":")[0].dropFirst().dropLast())
                #expect(detail(String(event.dropLast()) + "," + member + "}") == "the member \"\(key)\" appears more than once")
            }
        }
        #expect(detail(stream(#","artist\u005fid":"a2""#)) == #"the member "artist_id" appears more than once"#)
        #expect(detail(stream(#","x":1,"y":2,"x":3"#)) == #"the member "x" appears more than once"#)
        #expect(detail(stream(#","x":1,"\u0078":2"#)) == #"the member "x" appears more than once"#)
        #expect(detail(stream(#","y":1,"y":2,"platform":"x""#)) == #"the member "y" appears more than once"#, "the first repeat")
        #expect(detail(stream(#","platform":"x","y":1,"y":2"#)) == #"the member "platform" appears more than once"#)
        #expect(reason(stream(#","x":1,"X":2,"x1":3,"platforms":"x""#)) == nil)
        #expect(reason(stream(#","x":1,"x":2,"y":]"#)) == .invalidJSON, "invalid JSON after a repeat")
    }

    @Test func sizeLimitIs64KiB() {
        let base = stream(#","pad":""#)
        let fits = base + String(repeating: "x", count: 65_536 - base.utf8.count - 2) + "\"}"
        #expect(fits.utf8.count == 65_536)
        #expect(reason(fits) == nil)
        #expect(reason(fits + " ") == .tooLarge)
    }
}

extension Result where Success == Event, Failure == Rejection {
    var rejectionReason: Rejection.Reason? {
        if case .failure(let rejection) = self { return rejection.reason }
        return nil
    }
}

