/// One line of an archive segment: NDJSON written by `serve --archive-dir` and `generate --archive`, read by replay.
///
/// A segment starts with a header naming the run of one partition it holds:
///
///     {"backbeat_archive":1,"topic":"streams","partition":3,"from_offset":1200}
///
/// (`from_offset`: the partition's stored next offset when the run began, null when nothing was stored), then one
/// line per consumed message, valid or not, in offset order:
///
///     {"topic":"streams","partition":3,"offset":1234,"timestamp_ms":1763700000123,"consumed_us":1763700000123456,"key":"a-7","value":"{\"event_id\":...}"}
///
/// `value` and `key` hold the raw bytes as a JSON string when they are UTF-8, else `value_base64` / `key_base64`
/// hold them in base64; null when the message had none. `consumed_us` is the clock the live path validated the
/// message against, so a replay makes the same accept or reject decision.
public enum ArchiveLine: Equatable, Sendable {
    case header(ArchiveRun)
    case message(ArchivedMessage)

    /// The format version written in headers.
    public static let version = 1

    /// Whether a line is an archive header (how replay tells an archive from plain event NDJSON).
    public static func isHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        let prefix = "{\"backbeat_archive\":".utf8
        return line.count >= prefix.count && zip(line, prefix).allSatisfy { $0 == $1 }
    }
}

/// A contiguous run of one partition's messages: the messages after `fromOffset` (nil: from wherever the partition
/// began), with no gap, until the next header of that partition.
public struct ArchiveRun: Equatable, Sendable {
    public var topicPartition: TopicPartition
    public var fromOffset: Int64?

    public init(topicPartition: TopicPartition, fromOffset: Int64?) {
        self.topicPartition = topicPartition
        self.fromOffset = fromOffset
    }
}

/// A consumed message as archived, with the clock it was validated against.
public struct ArchivedMessage: Equatable, Sendable {
    public var message: ConsumedMessage
    public var consumedAt: Timestamp

    public init(message: ConsumedMessage, consumedAt: Timestamp) {
        self.message = message
        self.consumedAt = consumedAt
    }
}

/// Why an archive line cannot be read.
public struct ArchiveLineError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
}

// MARK: - Writing

extension ArchiveLine {
    /// Appends the header line of `run` (with its newline) to `output`.
    public static func appendHeader(_ run: ArchiveRun, to output: inout [UInt8]) {
        output += #"{"backbeat_archive":"#.utf8
        appendInteger(Int64(version), to: &output)
        output += #","topic":"#.utf8
        appendString(Array(run.topicPartition.topic.utf8), to: &output)
        output += #","partition":"#.utf8
        appendInteger(Int64(run.topicPartition.partition), to: &output)
        output += #","from_offset":"#.utf8
        if let from = run.fromOffset { appendInteger(from, to: &output) } else { output += "null".utf8 }
        output += "}\n".utf8
    }

    /// Appends the line of `message` (with its newline) to `output`.
    public static func appendMessage(_ message: ConsumedMessage, consumedAt: Timestamp, to output: inout [UInt8]) {
        output += #"{"topic":"#.utf8
        appendString(Array(message.position.topicPartition.topic.utf8), to: &output)
        output += #","partition":"#.utf8
        appendInteger(Int64(message.position.topicPartition.partition), to: &output)
        output += #","offset":"#.utf8
        appendInteger(message.position.offset, to: &output)
        output += #","timestamp_ms":"#.utf8
        if let timestamp = message.timestampMilliseconds { appendInteger(timestamp, to: &output) } else { output += "null".utf8 }
        output += #","consumed_us":"#.utf8
        appendInteger(consumedAt.microseconds, to: &output)
        appendBytes(name: "key", message.key, to: &output)
        appendBytes(name: "value", message.value, to: &output)
        output += "}\n".utf8
    }

    private static func appendBytes(name: String, _ bytes: [UInt8]?, to output: inout [UInt8]) {
        output += ",\"".utf8
        output += name.utf8
        guard let bytes else {
            output += "\":null".utf8
            return
        }
        if String(validating: bytes, as: UTF8.self) != nil {
            output += "\":".utf8
            appendString(bytes, to: &output)
        } else {
            output += "_base64\":\"".utf8
            Base64.encode(bytes, into: &output)
            output.append(UInt8(ascii: "\""))
        }
    }

    /// Appends valid UTF-8 `bytes` as a JSON string: quotes, backslashes and control characters escaped.
    private static func appendString(_ bytes: [UInt8], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): output += #"\""#.utf8
            case UInt8(ascii: "\\"): output += #"\\"#.utf8
            case UInt8(ascii: "\n"): output += #"\n"#.utf8
            case UInt8(ascii: "\r"): output += #"\r"#.utf8
            case UInt8(ascii: "\t"): output += #"\t"#.utf8
            case 0..<0x20:
                output += #"\u00"#.utf8
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0xF))
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    private static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        output += String(value).utf8
    }
}

// MARK: - Reading

extension ArchiveLine {
    /// Reads one line (without its newline).
    public static func decode(_ line: UnsafeRawBufferPointer) throws(ArchiveLineError) -> ArchiveLine {
        let members: [JSONMember]
        do {
            members = try JSONScanner.scanObject(line)
        } catch {
            throw ArchiveLineError(description: "not an archive line: \(error)")
        }
        func member(_ name: StaticString) -> JSONMember? {
            members.first { JSONScanner.key($0, is: name, in: line) }
        }
        func integer(_ name: StaticString, nullable: Bool = false) throws(ArchiveLineError) -> Int64? {
            guard let found = member(name) else { throw ArchiveLineError(description: "archive line without \"\(name)\"") }
            if nullable && found.kind == .null { return nil }
            guard found.kind == .number, let value = parseInteger(UnsafeRawBufferPointer(rebasing: line[found.value])) else {
                throw ArchiveLineError(description: "\"\(name)\" of an archive line is not an integer")
            }
            return value
        }
        guard let topicMember = member("topic"), topicMember.kind == .string else {
            throw ArchiveLineError(description: "archive line without a \"topic\" string")
        }
        let topic = JSONScanner.string(topicMember.value, hasEscapes: topicMember.valueHasEscapes, in: line)
        guard let partitionNumber = try integer("partition"), let partition = Int32(exactly: partitionNumber) else {
            throw ArchiveLineError(description: "\"partition\" of an archive line is out of range")
        }
        let topicPartition = TopicPartition(topic: topic, partition: partition)

        if let version = member("backbeat_archive") {
            guard version.kind == .number, parseInteger(UnsafeRawBufferPointer(rebasing: line[version.value])) == Int64(self.version) else {
                throw ArchiveLineError(description: "archive format version \(String(decoding: UnsafeRawBufferPointer(rebasing: line[version.value]), as: UTF8.self)) is not supported (this build reads version \(self.version))")
            }
            return .header(ArchiveRun(topicPartition: topicPartition, fromOffset: try integer("from_offset", nullable: true)))
        }
        let message = ConsumedMessage(
            position: MessagePosition(topicPartition: topicPartition, offset: try integer("offset")!),
            key: try bytes("key", in: members, line: line),
            value: try bytes("value", in: members, line: line),
            timestampMilliseconds: try integer("timestamp_ms", nullable: true))
        return .message(ArchivedMessage(message: message, consumedAt: Timestamp(microseconds: try integer("consumed_us")!)))
    }

    /// The bytes of `name` (a JSON string) or `name_base64`; nil when null or absent.
    private static func bytes(_ name: String, in members: [JSONMember], line: UnsafeRawBufferPointer) throws(ArchiveLineError) -> [UInt8]? {
        for member in members {
            let key = JSONScanner.string(member.key, hasEscapes: member.keyHasEscapes, in: line)
            if key == name {
                switch member.kind {
                case .null: return nil
                case .string:
                    let text = UnsafeRawBufferPointer(rebasing: line[member.value])
                    return member.valueHasEscapes ? JSONScanner.unescapedBytes(text) : Array(text)
                default: throw ArchiveLineError(description: "\"\(name)\" of an archive line is neither a string nor null")
                }
            }
            if key == name + "_base64" {
                guard member.kind == .string, let decoded = Base64.decode(UnsafeRawBufferPointer(rebasing: line[member.value])) else {
                    throw ArchiveLineError(description: "\"\(key)\" of an archive line is not base64")
                }
                return decoded
            }
        }
        return nil
    }

    private static func parseInteger(_ text: UnsafeRawBufferPointer) -> Int64? {
        var negative = false
        var digits = text[...]
        if digits.first == UInt8(ascii: "-") {
            negative = true
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 19 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return negative ? -value : value
    }
}
