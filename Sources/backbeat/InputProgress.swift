import Foundation

/// Progress of a count read from many inputs (`backbeat rebuild`, `backbeat artist set-zone` with archives), on
/// stderr: redrawn in place on a terminal, a plain line every five seconds otherwise, and always after the last input.
struct InputProgress {
    let command: String
    let started = ContinuousClock.now
    let terminal = isatty(STDERR_FILENO) == 1
    private var lastPrinted = ContinuousClock.now

    init(_ command: String) {
        self.command = command
    }

    mutating func read(_ done: Int, of count: Int, events: Int64) {
        let now = ContinuousClock.now
        guard done == count || now - lastPrinted >= (terminal ? .milliseconds(200) : .seconds(5)) else { return }
        lastPrinted = now
        let text = "\(command): \(done)/\(count) inputs read, \(events) events counted, \(Int((now - started).seconds)) s"
        FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + text + (done == count ? "\n" : "") : text + "\n").utf8))
    }
}
