import BackbeatCore
import BackbeatServer
import Foundation
import Testing

/// Every error code the API can answer with is in docs/api.md's table and in docs/openapi.yaml's `Error` schema, and
/// nothing else is: the typed codes are enumerated, not listed.
@Suite struct ErrorCodeTests {
    @Test func everyAPIErrorCodeIsDocumented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let api = try String(contentsOf: root.appendingPathComponent("docs/api.md"), encoding: .utf8)
        // The code column of the error table's rows: "| 400 | `a`, `b` | when |".
        let rows = api.split(separator: "\n").filter { $0.hasPrefix("| 4") || $0.hasPrefix("| 5") }
        let documented = Set(rows.flatMap { row in
            row.split(separator: "|")[1].matches(of: /`([a-z_]+)`/).map { String($0.1) }
        })
        let codes = Set(APIError.Code.allCases.map(\.rawValue) + QueryError.Code.allCases.map(\.rawValue))
        #expect(codes.subtracting(documented).isEmpty, "docs/api.md's error table lacks \(codes.subtracting(documented).sorted())")
        #expect(documented.subtracting(codes).isEmpty, "documented but never answered: \(documented.subtracting(codes).sorted())")

        // docs/openapi.yaml: the `code` enum of the `Error` schema, one "- name" line each.
        let openapi = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let start = try #require(openapi.range(of: "            code:\n              type: string\n              enum:\n"))
        let enumerated = Set(openapi[start.upperBound...].split(separator: "\n")
            .prefix { $0.hasPrefix("                - ") }
            .map { String($0.dropFirst("                - ".count)) })
        #expect(enumerated == codes, "docs/openapi.yaml's Error codes: missing \(codes.subtracting(enumerated).sorted()), extra \(enumerated.subtracting(codes).sorted())")
    }
}
