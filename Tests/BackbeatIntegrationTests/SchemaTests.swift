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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, TestEnvironment.packageRoot.path, directory.appendingPathComponent("events.ndjson").path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
    }
}
