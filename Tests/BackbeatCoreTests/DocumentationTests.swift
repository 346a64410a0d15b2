import BackbeatCore
import Foundation
import Testing

/// The documents name exactly the codes the code emits.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func document(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func everyRejectionReasonIsDocumented() throws {
        let events = try document("docs/events.md")
        for reason in Rejection.Reason.all {
            #expect(events.contains("| `\(reason.rawValue)` |"), "docs/events.md lacks \(reason.rawValue)")
        }
        let documented = events.matches(of: /\| `([a-z_]+)` \| (?:the|valid|a |right|`type`|`occurred_at`|not valid)/).map { String($0.1) }
        #expect(Set(documented) == Set(Rejection.Reason.all.map(\.rawValue)))
    }

    @Test func everyDatasetDimensionAndMetricIsDocumented() throws {
        let api = try document("docs/api.md")
        for dataset in Dataset.allCases {
            let row = try #require(api.split(separator: "\n").first { $0.hasPrefix("| `\(dataset.rawValue)` |") })
            for dimension in dataset.dimensions { #expect(row.contains("`\(dimension.rawValue)`"), "\(dataset) \(dimension)") }
            for metric in dataset.metrics { #expect(row.contains("`\(metric.rawValue)`"), "\(dataset) \(metric)") }
        }
    }
}
