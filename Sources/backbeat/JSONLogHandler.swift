import BackbeatCore
import Foundation
import Logging

/// Writes each log event to standard error as one JSON object per line, for log collectors:
/// `{"time":"…","level":"info","label":"backbeat","message":"…","source":"BackbeatServer", …metadata}`.
/// Metadata values become JSON strings (nested values in their swift-log text form); metadata keys that clash with
/// the fixed fields are prefixed with `meta_`.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    static let fixedFields: Set<String> = ["time", "level", "label", "message", "source"]

    func log(event: LogEvent) {
        var line = "{"
        func field(_ key: String, _ value: String) {
            if line.count > 1 { line += "," }
            line += JSONString.quoted(key) + ":" + JSONString.quoted(value)
        }
        field("time", Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        field("level", event.level.rawValue)
        field("label", label)
        field("message", event.message.description)
        field("source", event.source)
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            field(Self.fixedFields.contains(key) ? "meta_" + key : key, value.description)
        }
        line += "}\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
