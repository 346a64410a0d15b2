import Foundation

/// Turns the paths given to `replay` and `rebuild` into input files: a directory stands for every sealed
/// `.ndjson` and `.ndjson.zst` file below it, sorted by path (for an archive directory: by topic, partition and
/// first offset); open segments (`.open`) only with `includingOpen`. Files and `-` (stdin) stay as given.
public enum InputPaths {
    public static func expand(_ paths: [String], includingOpen: Bool = false) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                files.append(path)
                continue
            }
            guard let enumerator = FileManager.default.enumerator(atPath: path) else {
                throw ArchiveError(path: path, position: 0, "cannot list the directory")
            }
            var found: [String] = []
            while let relative = enumerator.nextObject() as? String {
                let name = includingOpen && relative.hasSuffix(ArchiveWriter.openSuffix) ? String(relative.dropLast(ArchiveWriter.openSuffix.count)) : relative
                if name.hasSuffix(".ndjson") || name.hasSuffix(".ndjson.zst") { found.append(relative) }
            }
            guard !found.isEmpty else { throw ArchiveError(path: path, position: 0, "no .ndjson or .ndjson.zst files below the directory") }
            files += found.sorted().map { (path as NSString).appendingPathComponent($0) }
        }
        return files
    }
}
