import BackbeatCore
import Foundation
import Testing

/// The JSON Schemas in docs/schemas accept what the validator accepts and refuse what it refuses
/// (for the rules a schema can express; the future-timestamp rule depends on the time of consumption).
@Suite struct SchemaTests {
    @Test func schemasAgreeWithTheValidator() throws {
        var generator = EventGenerator(.init(seed: 3, artists: 5, days: 3, start: CivilDate(year: 2026, month: 1, day: 1)))
        var documents: [(String, Bool)] = (0..<300).map { _ in (String(decoding: generator.next().value!, as: UTF8.self), true) }
        let invalid = [
            #"{"event_id":"x","type":"stream","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a b","track_id":"t","platform":"p"}"#,
            #"{"event_id":"x","type":"stream","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","track_id":"t","platform":"P"}"#,
            #"{"event_id":"x","type":"stream","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","track_id":"t","platform":"p","duration_ms":86400001}"#,
            #"{"event_id":"x","type":"stream","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","track_id":"t","platform":"p","country":"se"}"#,
            #"{"event_id":"x","type":"revenue","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","source":"merch","currency":"EUR","amount":"1.1234567"}"#,
            #"{"event_id":"x","type":"revenue","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","source":"gift","currency":"EUR","amount":"1"}"#,
            #"{"event_id":"x","type":"social","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","platform":"x","action":"like","count":0}"#,
            #"{"event_id":"x","type":"social","occurred_at":"2026-01-01T00:00:00Z","artist_id":"a","platform":"x"}"#,
        ]
        documents += invalid.map { ($0, false) }
        let now = Timestamp(seconds: 1_900_000_000)
        for (json, valid) in documents {
            guard case .success = EventDecoder.decode(Array(json.utf8), now: now) else {
                #expect(!valid, "the validator refused a generated event: \(json)")
                continue
            }
            #expect(valid, "the validator accepted \(json)")
        }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("schemas-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = documents.map { #"{"valid":\#($0.1),"event":\#($0.0)}"# }.joined(separator: "\n")
        try input.write(to: directory.appendingPathComponent("events.ndjson"), atomically: true, encoding: .utf8)
        let script = """
            import json, sys, jsonschema
            root = sys.argv[1]
            schemas = {t: json.load(open(f"{root}/docs/schemas/{t}.schema.json")) for t in ("stream", "revenue", "social")}
            wrong = 0
            for line in open(sys.argv[2]):
                case = json.loads(line)
                schema = schemas.get(case["event"].get("type"))
                ok = schema is not None and jsonschema.Draft202012Validator(schema).is_valid(case["event"])
                if ok != case["valid"]:
                    wrong += 1
                    print("schema disagrees:", line.strip())
            sys.exit(1 if wrong else 0)
            """
        let (status, text) = try Self.python(script, [TestEnvironment.packageRoot.path, directory.appendingPathComponent("events.ndjson").path])
        #expect(status == 0, "\(text)")
    }

    /// The page family's contract (issue 41): docs/schemas/page.schema.json takes the example message of each type in
    /// docs/schemas/examples and every variant within the documented bounds, and refuses each variant the contract
    /// rejects (a missing required field, an unknown type, a slug out of bounds, properties past their limits); and
    /// the validator (`EventDecoder.decodeRecord`, a page event) takes and refuses the same variants.
    @Test func thePageSchemaTakesItsExamplesAndRefusesWhatTheContractRejects() throws {
        let variants = FileManager.default.temporaryDirectory.appendingPathComponent("page-variants-\(UInt32.random(in: 0...UInt32.max)).ndjson")
        defer { try? FileManager.default.removeItem(at: variants) }
        let script = """
            import copy, json, sys, jsonschema
            root = sys.argv[1]
            schema = json.load(open(f"{root}/docs/schemas/page.schema.json"))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
            types = ["portfolio_view", "section_view", "block_interaction", "cta_click"]
            examples = {t: json.load(open(f"{root}/docs/schemas/examples/{t}.json")) for t in types}
            events_md = open(f"{root}/docs/events.md").read()
            wrong = []
            cases = []
            def check(event, valid, why):
                cases.append({"valid": valid, "why": why, "event": json.dumps(event, ensure_ascii=False)})
                if validator.is_valid(event) != valid:
                    wrong.append(f"{'refused' if valid else 'took'} {why}: {json.dumps(event)}")
            def variant(t, **changes):
                event = copy.deepcopy(examples[t])
                for key, value in changes.items():
                    if value is None:
                        event.pop(key, None)
                    else:
                        event[key] = value
                return event
            for t, example in examples.items():
                if example.get("type") != t:
                    wrong.append(f"examples/{t}.json is not a {t}")
                if f"schemas/examples/{t}.json" not in events_md:
                    wrong.append(f"docs/events.md does not link examples/{t}.json")
                check(example, True, f"the {t} example")
                for field in ["event_id", "type", "occurred_at", "artist_id", "visitor_id", "portfolio_id"]:
                    check(variant(t, **{field: None}), False, f"a {t} without {field}")
                check(variant(t, session_id=None, country=None, referrer=None, properties=None), True, f"a {t} without its optional fields")
                check(variant(t, session_id="", ), False, f"a {t} with an empty session_id")
                check(variant(t, country="se"), False, f"a {t} with a lower-case country")
                check(variant(t, visitor_id="v" * 129), False, f"a {t} with a visitor_id of 129 characters")
                check(variant(t, portfolio_id="pf main"), False, f"a {t} with a space in portfolio_id")
                check(variant(t, referrer="r" * 2049), False, f"a {t} with a referrer of 2,049 characters")
                check(variant(t, properties={f"k{i}": "v" for i in range(32)}), True, f"a {t} with 32 properties")
                check(variant(t, properties={f"k{i}": "v" for i in range(33)}), False, f"a {t} with 33 properties")
                check(variant(t, properties={"k" * 64: "v" * 256}), True, f"a {t} with a 64-character key and 256-character value")
                check(variant(t, properties={"k" * 65: "v"}), False, f"a {t} with a 65-character key")
                check(variant(t, properties={"k": "v" * 257}), False, f"a {t} with a 257-character value")
                check(variant(t, properties={"position": 3}), False, f"a {t} with a property that is not a string")
            check(variant("portfolio_view", type="page_view"), False, "an unknown type")
            check(variant("portfolio_view", category=None), True, "a portfolio_view without category")
            check(variant("portfolio_view", category="Music"), False, "a portfolio_view with an upper-case category")
            check(variant("section_view", section_id=None), False, "a section_view without section_id")
            for field in ["block_id", "block_type", "action"]:
                check(variant("block_interaction", **{field: None}), False, f"a block_interaction without {field}")
            check(variant("block_interaction", block_type="video"), True, "a block_interaction on another block type")
            check(variant("block_interaction", action="swipe-left"), False, "a block_interaction with a hyphen in action")
            check(variant("cta_click", action_type=None), False, "a cta_click without action_type")
            check(variant("cta_click", action_type="a" * 32), True, "a cta_click with a 32-character action_type")
            check(variant("cta_click", action_type="a" * 33), False, "a cta_click with a 33-character action_type")
            check(variant("cta_click", type="section_view"), False, "a section_view without section_id (a cta_click retyped)")
            with open(sys.argv[2], "w") as out:
                for case in cases:
                    out.write(json.dumps(case) + "\\n")
            print("\\n".join(wrong))
            sys.exit(1 if wrong else 0)
            """
        let (status, text) = try Self.python(script, [TestEnvironment.packageRoot.path, variants.path])
        #expect(status == 0, "\(text)")

        struct Variant: Decodable {
            var valid: Bool
            var why: String
            var event: String
        }
        let lines = try String(contentsOf: variants, encoding: .utf8).split(separator: "\n")
        #expect(lines.count > 60, "the script wrote its variants")
        let now = Timestamp(seconds: 1_900_000_000)
        for line in lines {
            let variant = try JSONDecoder().decode(Variant.self, from: Data(line.utf8))
            let taken: Bool
            if case .success(let record) = EventDecoder.decodeRecord(Array(variant.event.utf8), now: now), case .page = record.details {
                taken = true
            } else {
                taken = false
            }
            #expect(taken == variant.valid, "the validator \(taken ? "took" : "refused") \(variant.why): \(variant.event)")
        }
    }

    /// Runs `script` with python3 and `arguments`: its exit status and its output.
    private static func python(_ script: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
