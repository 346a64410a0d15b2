import BackbeatCore
import Foundation
import Testing

extension [(String, String)] {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) { $0 == $1 } }
}

/// Headless Chromium (Debian's `chromium`, installed by scripts/test).
enum Chromium {
    /// The tests' day (`Timestamp.wallClock`, which BACKBEAT_CLOCK_OFFSET moves): the browser keeps the system's
    /// clock, so pages are opened as of this day (`#as_of=`).
    static var today: String { RFC3339.formatDate(CivilDate(daysSinceEpoch: Timestamp.wallClock().daysSinceEpoch)) }

    /// A page's DOM after its scripts ran, as serialized HTML.
    struct Page {
        var html: String

        /// `data-value` of the element with `id`.
        func value(of id: String) -> String? {
            firstMatch(#"id="\#(id)"[^>]*data-value="([^"]*)""#)
        }

        func attribute(_ name: String, ofTag tag: String) -> String? {
            firstMatch(#"<\#(tag)[^>]*\#(name)="([^"]*)""#)
        }

        /// Values of `first` and `second` on each element that has both, in document order.
        func pairs(_ first: String, _ second: String) -> [(String, String)] {
            matches(#"\#(first)="([^"]*)"[^>]*\#(second)="([^"]*)""#).map { ($0[0], $0[1]) }
        }

        /// The option values of the `<select>` with `id`.
        func options(of id: String) -> [String] {
            part(from: id, to: "</select>").matches(#"<option value="([^"]*)""#).map { $0[0] }
        }

        /// The part of the page from the element with `id` to the first `end` after it (empty when there is none).
        func part(from id: String, to end: String) -> Page {
            guard let start = html.range(of: #"id="\#(id)""#), let stop = html.range(of: end, range: start.upperBound..<html.endIndex) else { return Page(html: "") }
            return Page(html: String(html[start.lowerBound..<stop.upperBound]))
        }

        private func firstMatch(_ pattern: String) -> String? { matches(pattern).first?.first }

        /// The groups of every match of `pattern` (`.` matches newlines too).
        func matches(_ pattern: String) -> [[String]] {
            let regex = try! NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
            let whole = NSRange(html.startIndex..., in: html)
            return regex.matches(in: html, range: whole).map { match in
                (1..<match.numberOfRanges).map { String(html[Range(match.range(at: $0), in: html)!]) }
            }
        }
    }

    static let common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                         "--virtual-time-budget=15000"]

    static func dom(of url: String, width: Int, height: Int) throws -> Page {
        Page(html: try run(common + ["--window-size=\(width),\(height)", "--dump-dom", url]))
    }

    /// Saves a PNG of the page at `width` x `height` and checks that it is one, of that width, and not blank.
    static func screenshot(of url: String, width: Int, height: Int, to file: URL, extra: [String] = []) throws {
        try? FileManager.default.removeItem(at: file)
        _ = try run(common + extra + ["--window-size=\(width),\(height)", "--screenshot=\(file.path)", url])
        let png = try Data(contentsOf: file)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let pngWidth = png.count > 24 ? png[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
        #expect(pngWidth == width, "\(file.lastPathComponent) is \(pngWidth) px wide")
        #expect(png.count > 20_000, "\(file.lastPathComponent) has \(png.count) bytes: a blank page compresses to far less")
    }

    private static func run(_ arguments: [String]) throws -> String {
        let (status, output) = try runToCompletion("/usr/bin/chromium", arguments, keepingErrors: false)
        guard status == 0 else { throw TestEnvironment.Missing(description: "chromium exited with \(status)") }
        return output
    }
}
