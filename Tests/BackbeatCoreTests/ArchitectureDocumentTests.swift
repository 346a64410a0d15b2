import Foundation
import Testing

/// docs/architecture.md stays true: each file it names exists and declares the types and functions named beside it
/// (`` `Sources/…/File.swift` — `Name`, `Other`: … ``), every file of the ingest and query folders is named, and the
/// README's layout names every source folder.
@Suite struct ArchitectureDocumentTests {
    static let root = DocumentationTests.root
    static let walkedFolders = [
        "Sources/BackbeatCore/Ingest", "Sources/BackbeatServer/Ingest", "Sources/BackbeatCore/Query", "Sources/BackbeatServer/Query",
        "Sources/BackbeatCore/Cubes",
    ]

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Each file the page names, with the names listed right after it.
    static func entries(of page: String) -> [(path: String, names: [String])] {
        page.matches(of: /`(Sources\/[^`]+\.swift)`(?:\s+—\s+((?:`[^`]+`(?:,\s*)?)+))?/).map { match in
            let names = match.2.map { list in list.matches(of: /`([^`]+)`/).map { String($0.1) } } ?? []
            return (String(match.1), names)
        }
    }

    /// Whether `source` declares `name` (a type, function, property, case or initializer).
    static func declares(_ source: String, _ name: String) -> Bool {
        let escaped = NSRegularExpression.escapedPattern(for: name)
        let pattern = #"\b(func|var|let|struct|class|enum|protocol|actor|typealias|case)\s+"# + escaped + #"\b"#
        return source.range(of: pattern, options: .regularExpression) != nil
    }

    @Test func everyNamedFileDeclaresWhatThePageNamesInIt() throws {
        let page = try Self.read("docs/architecture.md")
        let entries = Self.entries(of: page)
        #expect(entries.count > 40, "the page names the files of both paths")
        #expect(entries.contains { $0.path.hasSuffix("IngestState.swift") && $0.names.contains("applyNextMemoryChange") })
        for (path, names) in entries {
            let source = try #require(try? Self.read(path), "docs/architecture.md names \(path), which does not exist")
            for name in names {
                #expect(Self.declares(source, name), "docs/architecture.md says \(path) declares \(name)")
            }
        }
    }

    @Test func everyFileOfTheIngestAndQueryFoldersIsNamed() throws {
        let named = Set(Self.entries(of: try Self.read("docs/architecture.md")).map(\.path))
        for folder in Self.walkedFolders {
            let files = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent(folder).path)
                .filter { $0.hasSuffix(".swift") }
            #expect(!files.isEmpty, "\(folder) exists")
            for file in files {
                #expect(named.contains("\(folder)/\(file)"), "docs/architecture.md does not name \(folder)/\(file)")
            }
        }
    }

    @Test func theReadmesLayoutNamesEverySourceFolder() throws {
        let readme = try Self.read("README.md")
        let layout = try #require(readme.firstMatch(of: /## Layout\n\n```\n([\s\S]*?)```/)).1
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
        #expect(folders.count > 5)
        for folder in folders {
            #expect(layout.contains("Sources/\(folder)") || layout.contains(" \(folder)"), "README's layout lacks Sources/\(folder)")
        }
        #expect(readme.contains("docs/architecture.md"))
    }
}
