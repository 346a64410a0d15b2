import BackbeatCore
import BackbeatTestSupport
import Foundation
import Testing

/// The page family's rules (docs/events.md, "Page events"), with their boundary values: what a page event decodes to,
/// and the reason each broken rule is rejected with.
@Suite struct PageEventValidationTests {
    static let now = RFC3339.parseTimestamp("2026-12-05T20:00:00Z")!

    func decode(_ json: String) -> Result<PageEvent, Rejection> {
        EventDecoder.decodePage(Array(json.utf8), now: Self.now)
    }

    func reason(_ json: String) -> Rejection.Reason? {
        if case .failure(let rejection) = decode(json) { return rejection.reason }
        return nil
    }

    /// A message of `type` with the fields every page event needs, its type's and `extra`.
    func page(_ extra: String = "", type: String = "cta_click", replacing: (String, String)? = nil) -> String {
        let own = switch type {
        case "portfolio_view": ""
        case "section_view": #","section_id":"sec-1""#
        case "block_interaction": #","block_id":"blk-1","block_type":"release","action":"play""#
        default: #","action_type":"pre_save""#
        }
        var base = #"{"event_id":"p1","type":"\#(type)","occurred_at":"2026-12-05T19:00:00Z","artist_id":"a1","visitor_id":"v1","portfolio_id":"pf-1""# + own
        if let replacing { base = base.replacingFirst(replacing.0, with: replacing.1) }
        return base + extra + "}"
    }

    func properties(_ members: [(String, String)]) -> String {
        #","properties":{"# + members.map { #""\#($0.0)":"\#($0.1)""# }.joined(separator: ",") + "}"
    }

    @Test func theFourExamplesDecodeToWhatTheyGive() throws {
        let time = { (text: String) in RFC3339.parseTimestamp(text)! }
        let expected: [String: PageEvent] = [
            "portfolio_view": PageEvent(
                eventID: "pv-7f3a", occurredAt: time("2026-12-05T19:02:11.348Z"), artistID: "artist-0001", visitorID: "v-9b21c4",
                portfolioID: "pf-main", kind: .portfolioView(category: "music"), sessionID: "s-51e0", country: "SE",
                referrer: "instagram.com",
                properties: [.init("utm_source", "instagram"), .init("utm_campaign", "winter_tour")]),
            "section_view": PageEvent(
                eventID: "sv-7f3b", occurredAt: time("2026-12-05T19:02:14.002Z"), artistID: "artist-0001", visitorID: "v-9b21c4",
                portfolioID: "pf-main", kind: .sectionView(sectionID: "sec-tour-dates"), sessionID: "s-51e0",
                properties: [.init("position", "3")]),
            "block_interaction": PageEvent(
                eventID: "bi-7f3c", occurredAt: time("2026-12-05T19:02:20.517Z"), artistID: "artist-0001", visitorID: "v-9b21c4",
                portfolioID: "pf-main", kind: .blockInteraction(blockID: "blk-new-single", blockType: "release", action: "play"),
                sessionID: "s-51e0"),
            "cta_click": PageEvent(
                eventID: "cc-7f3d", occurredAt: time("2026-12-05T19:02:31.090Z"), artistID: "artist-0001", visitorID: "v-9b21c4",
                portfolioID: "pf-main", kind: .ctaClick(actionType: "pre_save"), sessionID: "s-51e0",
                properties: [.init("variant", "b")]),
        ]
        for (type, event) in expected {
            let example = try String(contentsOf: DocumentationTests.root.appendingPathComponent("docs/schemas/examples/\(type).json"), encoding: .utf8)
            #expect(decode(example) == .success(event), "\(type)")
        }
    }

    @Test func theServiceTakesValidPageEventsAndRejectsInvalidOnesByTheirRule() {
        let valid = Array(page(type: "section_view").utf8)
        guard case .success(let record) = EventDecoder.decodeRecord(valid, now: Self.now), case .page = record.details else {
            Issue.record("a valid page event was not taken in"); return
        }
        let invalid = Array(page(type: "section_view", replacing: (#","section_id":"sec-1""#, "")).utf8)
        #expect((try? EventDecoder.decodeRecord(invalid, now: Self.now).get()) == nil)
        if case .failure(let rejection) = EventDecoder.decodeRecord(invalid, now: Self.now) {
            #expect(rejection.reason == .missingField && rejection.detail.contains("section_id"))
        }
        // Unknown types name every type the contract knows.
        if case .failure(let unknown) = decode(page(replacing: (#""type":"cta_click""#, #""type":"page_view""#))) {
            #expect(unknown.reason == .unknownType)
            #expect(unknown.detail.contains("portfolio_view, section_view, block_interaction, cta_click"))
        } else {
            Issue.record("an unknown type was taken")
        }
    }

    @Test func everyRequiredFieldIsNamedWhenMissing() {
        let required: [(type: String, field: String, written: String)] = [
            ("cta_click", "visitor_id", #","visitor_id":"v1""#), ("cta_click", "portfolio_id", #","portfolio_id":"pf-1""#),
            ("cta_click", "action_type", #","action_type":"pre_save""#), ("section_view", "section_id", #","section_id":"sec-1""#),
            ("block_interaction", "block_id", #","block_id":"blk-1""#), ("block_interaction", "block_type", #","block_type":"release""#),
            ("block_interaction", "action", #","action":"play""#), ("cta_click", "artist_id", #","artist_id":"a1""#),
            ("cta_click", "event_id", #""event_id":"p1","#),
        ]
        for (type, field, written) in required {
            let result = decode(page(type: type, replacing: (written, "")))
            guard case .failure(let rejection) = result else { Issue.record("\(type) without \(field) taken"); continue }
            #expect(rejection.reason == .missingField && rejection.detail.contains("\"\(field)\""), "\(type) without \(field): \(rejection)")
            #expect(reason(page(type: type, replacing: (written, written.replacingFirst(#":""#, with: #":null,"x":""#)))) == .missingField)
        }
        #expect(reason(page(type: "portfolio_view")) == nil, "category is optional")
    }

    @Test func boundsOfTheFields() {
        #expect(reason(page(#","session_id":""# + String(repeating: "s", count: 128) + #"""#)) == nil)
        #expect(reason(page(#","session_id":""# + String(repeating: "s", count: 129) + #"""#)) == .invalidValue)
        #expect(reason(page(#","session_id":"""#)) == .invalidValue)
        #expect(reason(page(#","session_id":null"#)) == nil)
        #expect(reason(page(replacing: (#""visitor_id":"v1""#, #""visitor_id":""# + String(repeating: "é", count: 128) + #"""#))) == nil)
        #expect(reason(page(replacing: (#""visitor_id":"v1""#, #""visitor_id":""# + String(repeating: "v", count: 129) + #"""#))) == .invalidValue)
        #expect(reason(page(replacing: (#""visitor_id":"v1""#, #""visitor_id":7"#))) == .invalidType)
        #expect(reason(page(replacing: (#""portfolio_id":"pf-1""#, #""portfolio_id":"pf 1""#))) == .invalidValue)
        #expect(reason(page(type: "section_view", replacing: (#""section_id":"sec-1""#, #""section_id":"sec/1""#))) == .invalidValue)
        #expect(reason(page(#","country":"SE""#)) == nil)
        #expect(reason(page(#","country":"se""#)) == .invalidValue)
        #expect(reason(page(#","referrer":"""#)) == .invalidValue)
        #expect(reason(page(#","referrer":"https://x.com/"# + String(repeating: "p", count: 2048 - 14) + #"""#)) == nil)
        #expect(reason(page(#","referrer":"https://x.com/"# + String(repeating: "p", count: 2049 - 14) + #"""#)) == .invalidValue)
        // Slugs are open, of letters and underscores: like the social actions.
        #expect(reason(page(replacing: (#""action_type":"pre_save""#, #""action_type":""# + String(repeating: "a", count: 32) + #"""#))) == nil)
        #expect(reason(page(replacing: (#""action_type":"pre_save""#, #""action_type":""# + String(repeating: "a", count: 33) + #"""#))) == .invalidValue)
        #expect(reason(page(replacing: (#""action_type":"pre_save""#, #""action_type":"pre_save2""#))) == .invalidValue)
        #expect(reason(page(type: "block_interaction", replacing: (#""action":"play""#, #""action":"swipe-left""#))) == .invalidValue)
        #expect(reason(page(type: "block_interaction", replacing: (#""block_type":"release""#, #""block_type":"Release""#))) == .invalidValue)
        #expect(reason(page(#","category":"tour""#, type: "portfolio_view")) == nil)
        #expect(reason(page(#","category":"Tour""#, type: "portfolio_view")) == .invalidValue)
        #expect(reason(page(#","category":"""#, type: "portfolio_view")) == .invalidValue)
        // A field of another type is not this type's: a cta_click's action is ignored, not read as action_type.
        #expect(reason(page(#","action":"Not A Slug""#)) == nil)
        #expect(reason(page(#","occurred_at_extra":1"#)) == nil)
        #expect(reason(page(replacing: (#""occurred_at":"2026-12-05T19:00:00Z""#, #""occurred_at":"2026-12-05T21:00:01Z""#))) == .futureTimestamp)
    }

    @Test func propertiesAreBoundedInCountKeyBytesAndValueBytes() {
        let keys = (0..<33).map { ("k\($0)", "v") }
        #expect(reason(page(properties(Array(keys.prefix(32))))) == nil)
        #expect(reason(page(properties(keys))) == .tooManyProperties)
        #expect(reason(page(properties((0..<5000).map { ("k\($0)", "v") }))) == .tooManyProperties)
        #expect(reason(page(properties([(String(repeating: "k", count: 64), String(repeating: "v", count: 256))]))) == nil)
        #expect(reason(page(properties([(String(repeating: "k", count: 65), "v")]))) == .propertyKeyTooLong)
        #expect(reason(page(properties([("k", String(repeating: "v", count: 257))]))) == .propertyValueTooLong)
        // Bytes, not characters: 32 two-byte characters fit a key, 33 do not; escapes count as what they stand for.
        #expect(reason(page(properties([(String(repeating: "é", count: 32), "v")]))) == nil)
        #expect(reason(page(properties([(String(repeating: "é", count: 33), "v")]))) == .propertyKeyTooLong)
        #expect(reason(page(properties([("k", String(repeating: #"\u00e9"#, count: 128))]))) == nil)
        #expect(reason(page(properties([("k", String(repeating: #"\u00e9"#, count: 129))]))) == .propertyValueTooLong)
        #expect(reason(page(properties([("k", String(repeating: #"\n"#, count: 256))]))) == nil, "one byte each")
        #expect(reason(page(properties([]))) == nil)
        #expect(reason(page(#","properties":null"#)) == nil)
        #expect(reason(page(properties([("", "v")]))) == .invalidValue)
        #expect(reason(page(properties([("a", "1"), ("b", "2"), ("a", "3")]))) == .duplicateField)
        #expect(reason(page(properties([("a", "1"), (#"\u0061"#, "2")]))) == .duplicateField)
        #expect(reason(page(#","properties":{"position":3}"#)) == .invalidType)
        #expect(reason(page(#","properties":{"position":null}"#)) == .invalidType)
        #expect(reason(page(#","properties":{"position":{"x":"y"}}"#)) == .invalidType)
        #expect(reason(page(#","properties":["a"]"#)) == .invalidType)
        #expect(reason(page(#","properties":"a=b""#)) == .invalidType)
        #expect(reason(page(properties([("k", "v")]) + properties([("k", "v")]))) == .duplicateField)
        // What is kept: every member in order, escapes decoded.
        guard case .success(let event) = decode(page(properties([(#"utm\u005fsource"#, #"news\"letter"#), ("variant", "b")]))) else {
            Issue.record("refused"); return
        }
        #expect(event.properties == [.init("utm_source", #"news"letter"#), .init("variant", "b")])
    }

    @Test func theReferrerIsKeptAsItsHost() {
        let cases: [(String?, String)] = [
            (nil, "(direct)"),
            ("https://www.Instagram.com/artist0001/", "instagram.com"),
            ("https://WWW.EXAMPLE.COM:8443/a?b#c", "example.com"),
            ("http://news.ycombinator.com", "news.ycombinator.com"),
            ("https://user:secret@forum.example.org/t/1", "forum.example.org"),
            ("android-app://com.google.android.gm/", "com.google.android.gm"),
            ("//m.facebook.com/story", "m.facebook.com"),
            ("open.spotify.com/artist/1", "open.spotify.com"),
            ("localhost:3000/page", "localhost"),
            ("https://[2001:DB8::1]:443/x", "[2001:db8::1]"),
            ("https://www.com/", "www.com"),
            ("https://xn--bcher-kva.de/", "xn--bcher-kva.de"),
            (#"https:\/\/WWW.t.co\/x"#, "t.co"),
            ("https://bücher.de/", "(unknown)"),
            ("mailto:someone@example.com", "(unknown)"),
            ("https:///path", "(unknown)"),
            ("https://exa mple.com/", "(unknown)"),
            ("https://example.com:80a/", "(unknown)"),
            ("https://[]/", "(unknown)"),
            ("https://" + String(repeating: "a", count: 254) + "/", "(unknown)"),
            ("?q=1", "(unknown)"),
        ]
        for (referrer, host) in cases {
            let extra = referrer.map { #","referrer":"\#($0)""# } ?? ""
            guard case .success(let event) = decode(page(extra)) else { Issue.record("refused \(referrer ?? "nil")"); continue }
            #expect(event.referrer == host, "\(referrer ?? "nil")")
        }
    }

    /// A stream that carries page fields is still a stream: the fields of other types are not read.
    @Test func otherFamiliesIgnoreThePageFields() {
        let stream = #"{"event_id":"e1","type":"stream","occurred_at":"2026-12-05T10:00:00Z","artist_id":"a1","track_id":"t1","platform":"spotify","properties":7,"referrer":"","visitor_id":null,"category":"X","section_id":"/","block_id":"/","block_type":1,"action_type":[],"session_id":{},"portfolio_id":" "}"#
        #expect((try? EventDecoder.decodeRecord(Array(stream.utf8), now: Self.now).get()) != nil)
        let duplicated = #"{"event_id":"e1","type":"stream","occurred_at":"2026-12-05T10:00:00Z","artist_id":"a1","track_id":"t1","platform":"spotify","referrer":"a","referrer":"b"}"#
        if case .failure(let rejection) = EventDecoder.decodeRecord(Array(duplicated.utf8), now: Self.now) {
            #expect(rejection.reason == .duplicateField)
        } else {
            Issue.record("a duplicated key was taken")
        }
    }
}
