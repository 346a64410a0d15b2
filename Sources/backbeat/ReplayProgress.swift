import BackbeatArchive
import BackbeatCore
import Foundation

/// What one input's replay did.
struct ReplayReport {
    /// What an input turned out to be.
    enum Kind {
        case unknown
        /// Plain event NDJSON, named by its content.
        case plain(identity: String)
        /// An archive of consumed messages, applied against stored offsets.
        case archive
    }

    var path: String
    var kind = Kind.unknown
    /// Lines (plain) or messages (archive) applied by earlier runs or live consumption, skipped now.
    var alreadyApplied: Int64 = 0
    var lines: Int64 = 0
    var accepted = 0
    var rejected: [Rejection.Reason: Int] = [:]

    var rejectedCount: Int { rejected.values.reduce(0, +) }
}

/// Progress on stderr: a bar redrawn in place on a terminal, a plain line every five seconds otherwise.
struct ReplayProgress {
    let path: String
    let started = ContinuousClock.now
    let terminal = isatty(STDERR_FILENO) == 1
    var lastPrinted = ContinuousClock.now

    init(path: String) {
        self.path = path
    }

    mutating func update(reader: InputReader, report: ReplayReport) {
        let now = ContinuousClock.now
        guard now - lastPrinted >= (terminal ? .milliseconds(200) : .seconds(5)) else { return }
        lastPrinted = now
        let seconds = max(0.001, Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18)
        let events = report.accepted + report.rejectedCount
        let rate = Double(events) / seconds
        var text = "\(path): \(events) events, \(Int(rate)) events/s, \(reader.storedBytesRead / 1_000_000) MB read"
        if let size = reader.storedSize, size > 0 {
            let fraction = Double(reader.storedBytesRead) / Double(size)
            let eta = fraction > 0 ? seconds * (1 - fraction) / fraction : 0
            text += ", \(Int(fraction * 100))%, ETA \(Int(eta)) s"
            if terminal {
                let width = 24
                let filled = Int(fraction * Double(width))
                text = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] " + text
            }
        }
        FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }

    func finish(_ report: ReplayReport, dryRun: Bool, republished: Bool = false) {
        let reasons = report.rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        var text = "\(path): \(report.lines) lines"
        if report.alreadyApplied > 0 { text += " (\(min(report.alreadyApplied, report.lines)) already applied, skipped)" }
        if case .archive = report.kind { text += " of archive" }
        text += ", \(report.accepted) events accepted, \(report.rejectedCount) rejected"
        if !reasons.isEmpty { text += " (\(reasons.joined(separator: ", ")))" }
        text += dryRun ? "; dry run, nothing written" : republished ? "; valid events republished to Kafka" : (report.accepted + report.rejectedCount == 0 ? "; nothing new to apply" : "; applied to PostgreSQL")
        FileHandle.standardError.write(Data(((terminal ? "\r\u{1B}[K" : "") + text + "\n").utf8))
    }
}
