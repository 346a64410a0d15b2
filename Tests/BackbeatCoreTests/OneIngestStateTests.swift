import Foundation
import Testing

/// Read from the server's sources: the ingest's state has one home.
@Suite struct OneIngestStateTests {
    static let root = DocumentationTests.root

    /// The ledger, the in-memory layers, the stored offsets and ownership live in the one `IngestState`: in the
    /// server, only `SharedIngestState` holds an `IngestState`, behind its lock; no other type keeps a ledger, layers
    /// or a state it changes (a `var`) or guards (a `Mutex`). A `let` copy of the layers (a query's plan) is a read.
    /// (Fails, for one, on `LiveMemory` as it was: `Mutex<State>`, whose `State` held `var layers = MemoryLayers()`.)
    @Test func theLedgerAndTheLayersLiveOnlyInTheOneState() throws {
        let folder = Self.root.appendingPathComponent("Sources/BackbeatServer")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20)
        var homes: [String] = []
        for file in files {
            let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in source.matches(of: /(?m)^\s*(?:private\s+|fileprivate\s+)?(let|var)\s+\w+\s*(?::\s*([^=\n]+)|=\s*([\w<>]+)\()/) {
                let type = String(match.2 ?? match.3 ?? "")
                let held = type.contains(/\b(IngestLedger|MemoryLayers|IngestState)\b/)
                let changedOrGuarded = match.1 == "var" || type.contains("Mutex") || type.contains("Atomic")
                if held && changedOrGuarded { homes.append("\(file): \(match.0.trimmingCharacters(in: .whitespacesAndNewlines))") }
            }
        }
        #expect(homes == ["Ingest/SharedIngestState.swift: private let state: Mutex<IngestState>"], "kept outside the one state: \(homes)")
    }
}
