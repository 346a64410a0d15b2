import Foundation
import Testing

/// No error librdkafka returns is dropped: every call in Sources/ of a function that answers with an error code
/// (`rd_kafka_resp_err_t`) or an error object (`rd_kafka_error_t *`), as the installed headers declare them, uses what
/// it returns. A call written as a statement of its own, or assigned to `_`, drops it.
@Suite struct LibrdkafkaReturnCodeTests {
    static let headers = ["/usr/include/librdkafka/rdkafka.h", "/usr/include/librdkafka/rdkafka_mock.h"]

    /// The functions of `header` (C text) that return an error code or an error object.
    static func erringFunctions(in header: String) -> Set<String> {
        let code = header.replacing(/\/\*(.|\n)*?\*\//, with: "")
        var names: Set<String> = []
        for match in code.matches(of: /RD_EXPORT\s+rd_kafka_(?:resp_err_t|error_t\s*\*)\s*(rd_kafka_\w+)\s*\(/) {
            names.insert(String(match.1))
        }
        return names
    }

    /// The calls in `source` (Swift text) of `functions` whose result is dropped: `file:line: name`.
    static func droppedResults(in source: String, named file: String, of functions: Set<String>) -> [String] {
        var dropped: [String] = []
        for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            for statement in line.split(separator: ";") {
                guard let call = statement.firstMatch(of: /^\s*(?:defer\s*\{\s*)?(?:_\s*=\s*)?(rd_kafka_\w+)\s*\(/),
                      functions.contains(String(call.1)) else { continue }
                dropped.append("\(file):\(index + 1): \(call.1)")
            }
        }
        return dropped
    }

    @Test func everyLibrdkafkaErrorIsLookedAt() throws {
        let functions = try Self.headers.reduce(into: Set<String>()) { names, path in
            names.formUnion(Self.erringFunctions(in: try String(contentsOfFile: path, encoding: .utf8)))
        }
        // The headers were read: functions Backbeat calls are among them.
        #expect(functions.isSuperset(of: ["rd_kafka_commit", "rd_kafka_consumer_close", "rd_kafka_incremental_assign",
                                          "rd_kafka_mock_broker_set_rtt", "rd_kafka_poll_set_consumer"]))
        // The check finds a dropped result where there is one.
        let planted = "    _ = rd_kafka_commit(handle, list, 1)\n    rd_kafka_consumer_close(handle)\n    let error = rd_kafka_commit(handle, list, 0)"
        #expect(Self.droppedResults(in: planted, named: "planted", of: functions) == ["planted:1: rd_kafka_commit", "planted:2: rd_kafka_consumer_close"])

        let sources = TestEnvironment.packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var dropped: [String] = []
        var calls = 0
        for file in files.sorted() {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            calls += text.matches(of: /rd_kafka_\w+\s*\(/).count
            dropped += Self.droppedResults(in: text, named: file, of: functions)
        }
        #expect(calls > 50, "the sources were read")
        #expect(dropped.isEmpty, "librdkafka results dropped: \(dropped)")
    }
}
