import Foundation

/// Runs `executable` to completion and returns its exit status and what it printed: standard output, and standard
/// error too unless `keepingErrors` is false. `environment` is added to the test's own.
func runToCompletion(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil, keepingErrors: Bool = true
) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    if let directory { process.currentDirectoryURL = directory }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = keepingErrors ? pipe : FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}
