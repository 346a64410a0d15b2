import BackbeatReplay
import Foundation

/// Progress on stderr: a bar redrawn in place on a terminal, a plain line every five seconds otherwise.
struct ReplayProgress: ReplayObserver {
    /// What the final line says happened to the valid events.
    enum Destination {
        case postgres, dryRun, kafka
    }

    let destination: Destination
    /// When the current input started.
    var started = ContinuousClock.now
    let terminal = isatty(STDERR_FILENO) == 1
    var lastPrinted = ContinuousClock.now

    init(_ destination: Destination) {
        self.destination = destination
    }

    mutating func read(_ report: ReplayReport, bytesRead: Int, of size: Int?) {
        let now = ContinuousClock.now
        guard now - lastPrinted >= (terminal ? .milliseconds(200) : .seconds(5)) else { return }
        lastPrinted = now
        let seconds = max(0.001, (now - started).seconds)
        let events = report.accepted + report.rejectedCount
        let rate = Double(events) / seconds
        var text = "\(report.path): \(events) events, \(Int(rate)) events/s, \(bytesRead / 1_000_000) MB read"
        if let size, size > 0 {
            let fraction = Double(bytesRead) / Double(size)
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

    mutating func finished(_ report: ReplayReport) {
        let reasons = report.rejected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        var text = "\(report.path): \(report.lines) lines"
        if report.alreadyApplied > 0 { text += " (\(min(report.alreadyApplied, report.lines)) already applied, skipped)" }
        if case .archive = report.kind { text += " of archive" }
        text += ", \(report.accepted) events accepted, \(report.rejectedCount) rejected"
        if !reasons.isEmpty { text += " (\(reasons.joined(separator: ", ")))" }
        if report.duplicates > 0 { text += ", \(report.duplicates) resent (counted once)" }
        if report.beyondWindow > 0 { text += ", \(report.beyondWindow) older than the dedup window (counted)" }
        switch destination {
        case .dryRun: text += "; dry run, nothing written"
        case .kafka: text += "; valid events republished to Kafka"
        case .postgres: text += report.accepted + report.rejectedCount + report.duplicates == 0 ? "; nothing new to apply" : "; applied to PostgreSQL"
        }
        FileHandle.standardError.write(Data(((terminal ? "\r\u{1B}[K" : "") + text + "\n").utf8))
        started = ContinuousClock.now
    }
}
