import BackbeatCore
import Foundation
import PropertyBased
import Testing

/// Properties of validation under generated hostile input: whatever a producer sends, the ledger answers accepted
/// or rejected with a documented reason (never a trap), records each rejection once at its position, and the valid
/// messages around a mutant are all counted.
struct HostileInputPropertyTests {
    /// Ways a valid event turns hostile.
    enum Mutation: CaseIterable, Sendable {
        case truncate, flipByte, insertGarbage, invalidUTF8, duplicateField, wrongType, hugeNumber, hugeString,
             deepNesting, nullPayload, emptyPayload, dropField, replaceWithScalar, controlCharacter
    }

    static let start = CivilDate(year: 2026, month: 10, day: 1)
    /// A consumption time after every generated event.
    static let now = Timestamp(seconds: (start.daysSinceEpoch + 12) * 86_400)
    static let partition = TopicPartition(topic: "streams", partition: 0)

    @Test func everyMutantIsAnsweredAndItsNeighboursCounted() async {
        await propertyCheck(
            count: 2_000, input: Gen<Mutation>.case, Gen.int(in: 0...5_000), Gen.int(in: 0...1_000_000)
        ) { mutation, eventSeed, position in
            var generator = EventGenerator(.init(seed: UInt64(eventSeed), artists: 5, days: 10, start: Self.start))
            let before = generator.next()
            let victim = generator.next()
            let after = generator.next()
            let mutant = Self.mutate(victim.value ?? [], mutation, at: position)

            var ledger = IngestLedger()
            ledger.assign(Self.partition, storedOffset: nil)
            var accepted: [Event] = []
            let outcomes = [before.value, mutant, after.value].enumerated().map { offset, value in
                ledger.ingest(
                    ConsumedMessage(position: MessagePosition(topicPartition: Self.partition, offset: Int64(offset)), key: nil, value: value),
                    now: Self.now, onAccepted: { accepted.append($0) })
            }

            #expect(outcomes[0] == .accepted && outcomes[2] == .accepted, "valid neighbours of a \(mutation) mutant are counted")
            let pending = ledger.pendingDelta
            switch outcomes[1] {
            case .accepted:
                #expect(pending.rejected.isEmpty)
                #expect(accepted.count == 3)
            case .rejected(let reason):
                #expect(Rejection.Reason.all.contains(reason))
                #expect(pending.rejected.map(\.position.offset) == [1])
                #expect(pending.rejected.first?.value == mutant, "the rejected value is kept as consumed")
                #expect(pending.rejected.first.map { !$0.rejection.detail.isEmpty } == true)
                #expect(accepted.count == 2)
            case .ignored:
                Issue.record("a mutant at a new offset of an owned partition was ignored")
            }
            // What the ledger added is exactly the accepted events, no more.
            var expected = RollupDelta()
            for event in accepted { expected.add(event) }
            #expect(pending.streams == expected.streams && pending.revenue == expected.revenue && pending.social == expected.social)
        }
    }

    /// `bytes` turned hostile by `mutation`; `position` picks where.
    static func mutate(_ bytes: [UInt8], _ mutation: Mutation, at position: Int) -> [UInt8]? {
        var bytes = bytes
        let index = bytes.isEmpty ? 0 : position % bytes.count
        let text = String(decoding: bytes, as: UTF8.self)
        switch mutation {
        case .truncate:
            return Array(bytes.prefix(index))
        case .flipByte:
            guard !bytes.isEmpty else { return bytes }
            bytes[index] ^= UInt8(truncatingIfNeeded: 1 << (position % 8))
            return bytes
        case .insertGarbage:
            let garbage = (0..<(1 + position % 16)).map { UInt8(truncatingIfNeeded: ($0 &* 37) &+ position) }
            bytes.insert(contentsOf: garbage, at: index)
            return bytes
        case .invalidUTF8:
            let sequences: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]]
            bytes.insert(contentsOf: sequences[position % sequences.count], at: index)
            return bytes
        case .duplicateField:
            return Array(text.replacingFirst("{", with: #"{"artist_id":"dup","#).utf8)
        case .wrongType:
            let replacements = [#""artist_id":7"#, #""artist_id":null"#, #""artist_id":["a"]"#, #""occurred_at":12"#, #""type":{}"#]
            let chosen = replacements[position % replacements.count]
            let field = String(chosen.prefix { $0 != ":" })
            return Array(text.replacingField(field, with: chosen).utf8)
        case .hugeNumber:
            let numbers = ["1e400", "-1e400", String(repeating: "9", count: 400), "1" + String(repeating: "0", count: 30), "0.0000000000000000000001"]
            return Array(text.replacingFirst("{", with: #"{"count":\#(numbers[position % numbers.count]),"amount":\#(numbers[(position + 1) % numbers.count]),"#).utf8)
        case .hugeString:
            return Array(text.replacingFirst("{", with: #"{"note":""# + String(repeating: "x", count: 1_000 + position % 80_000) + #"","#).utf8)
        case .deepNesting:
            let depth = 10 + position % 5_000
            return Array(text.replacingFirst("{", with: #"{"nested":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + ",").utf8)
        case .nullPayload:
            return nil
        case .emptyPayload:
            return []
        case .dropField:
            let fields = ["event_id", "type", "occurred_at", "artist_id"]
            return Array(text.replacingField(fields[position % fields.count], with: #""ignored":0"#).utf8)
        case .replaceWithScalar:
            let scalars = ["null", "true", "42", #""text""#, "[]", "{}", ""]
            return Array(scalars[position % scalars.count].utf8)
        case .controlCharacter:
            return Array(text.replacingFirst(#"":""#, with: "\":\"\u{01}").utf8)
        }
    }
}

private extension String {
    /// Replaces `"field":value` (up to the next comma or closing brace) with `replacement`.
    func replacingField(_ field: String, with replacement: String) -> String {
        guard let start = range(of: "\"\(field)\":") else { return self }
        var end = start.upperBound
        var inString = false
        while end < endIndex {
            let character = self[end]
            if character == "\"" { inString.toggle() }
            if !inString && (character == "," || character == "}") { break }
            end = index(after: end)
        }
        return replacingCharacters(in: start.lowerBound..<end, with: replacement)
    }
}
