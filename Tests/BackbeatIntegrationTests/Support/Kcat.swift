import Foundation

/// Runs Debian's `kcat` (installed by scripts/test) and returns what it printed.
func kcat(_ arguments: [String], timeout: TimeInterval = 30) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/kcat")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    return String(decoding: data, as: UTF8.self)
}
