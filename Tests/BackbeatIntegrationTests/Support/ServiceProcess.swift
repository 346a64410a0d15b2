import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `backbeat serve` child process on a free port, with its log kept in a temporary file.
final class ServiceProcess: @unchecked Sendable {
    // @unchecked: used from one test task at a time.
    static let adminToken = "integration-test-admin-token"

    let process = Process()
    let port: Int
    let logPath: String

    /// librdkafka settings the tests start instances with: fast failure detection, so that a killed instance's
    /// partitions move on within seconds.
    static let fastGroupTimeouts = "session.timeout.ms=6000,heartbeat.interval.ms=500,max.poll.interval.ms=20000"

    /// Starts `backbeat serve` against `brokers` and `postgresURL` in consumer group `group`.
    /// `arguments` are added to the command line (for example `--memory-days`); `kafkaProperties` is
    /// `BACKBEAT_KAFKA_PROPERTIES` (empty: Backbeat's own defaults).
    init(
        brokers: String, postgresURL: String, group: String = "backbeat-test", flushInterval: String = "300ms", arguments: [String] = [],
        kafkaProperties: String = ServiceProcess.fastGroupTimeouts
    ) throws {
        port = try freePort()
        logPath = NSTemporaryDirectory() + "backbeat-serve-\(port)-\(UInt32.random(in: 0...UInt32.max)).log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.executableURL = URL(fileURLWithPath: try TestEnvironment.binary)
        // The tests' events have fixed dates (October 2026): retention, which counts days back from the clock, keeps
        // their hourly detail unless a test sets it, so that the suite answers the same on any date.
        let retention = arguments.contains("--detail-days") ? [] : ["--detail-days", "0"]
        process.arguments = ["serve", "--brokers", brokers, "--group", group, "--http-port", String(port), "--flush-interval", flushInterval,
                             "--advertise-url", "http://127.0.0.1:\(port)"] + retention + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["BACKBEAT_POSTGRES_URL"] = postgresURL
        environment["BACKBEAT_ADMIN_TOKEN"] = Self.adminToken
        environment["BACKBEAT_MIGRATIONS_DIR"] = TestEnvironment.packageRoot.appendingPathComponent("sql").path
        environment["BACKBEAT_KAFKA_PROPERTIES"] = kafkaProperties
        environment["BACKBEAT_LOG_LEVEL"] = "info"
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        try process.run()
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Waits for `/healthz`.
    func waitUntilHealthy() async throws {
        try await waitUntil(timeout: .seconds(30), "backbeat on port \(port) to answer /healthz (log: \(logPath))") {
            guard process.isRunning else { throw TestEnvironment.Missing(description: "backbeat exited: \(log())") }
            return (try? await HTTP.get(baseURL + "/healthz", token: nil).status) == 200
        }
    }

    /// Waits until the log has `text` at least `count` times.
    func waitForLog(_ text: String, count: Int = 1, timeout: Duration = .seconds(30)) async throws {
        try await waitUntil(timeout: timeout, "\"\(text)\" in \(logPath)") {
            log().components(separatedBy: text).count - 1 >= count
        }
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Sends SIGTERM and returns the exit status; -1 when the process has not exited within `deadline` (it is then
    /// killed, and the end of its log printed, so that a hang fails its test instead of holding the whole run). The end
    /// of the log is printed too when it ends with another status or a signal.
    func terminate(deadline: Duration = .seconds(60)) -> Int32 {
        process.terminate()
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while process.isRunning && clock.now < end { Thread.sleep(forTimeInterval: 0.05) }
        guard !process.isRunning else {
            print("backbeat (pid \(process.processIdentifier)) did not stop within \(deadline) of SIGTERM; killing it. Its log ends:\n"
                  + log().split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n"))
            kill()
            return -1
        }
        if process.terminationReason == .uncaughtSignal || process.terminationStatus != 0 {
            print("backbeat (pid \(process.processIdentifier)) ended with \(process.terminationReason == .uncaughtSignal ? "signal" : "status") "
                  + "\(process.terminationStatus) after SIGTERM. \(crashReport().map { "It crashed:\n\($0)\n" } ?? "")Its log ends:\n"
                  + log().split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n"))
        }
        return process.terminationStatus
    }

    /// The start of the crash report in the log, if the process crashed: the log lines before it, the runtime's
    /// message and the crashed thread's first frames (a backtrace's tail, its image list, says little).
    func crashReport() -> String? {
        let lines = log().split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.contains("Fatal error") || $0.contains("Program crashed") }) else { return nil }
        return lines[max(0, start - 5)..<min(lines.count, start + 45)].joined(separator: "\n")
    }

    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    deinit {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A minimal HTTP client over URLSession.
enum HTTP {
    struct Reply {
        var status: Int
        var body: Data
        var headers: [AnyHashable: Any] = [:]

        func json() throws -> Any { try JSONSerialization.jsonObject(with: body) }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static func get(_ url: String, token: String? = ServiceProcess.adminToken) async throws -> Reply {
        try await send(URLRequest(url: URL(string: url)!), token: token)
    }

    static func post(_ url: String, json: String, token: String? = ServiceProcess.adminToken) async throws -> Reply {
        try await send(json, to: url, method: "POST", token: token)
    }

    static func put(_ url: String, json: String, token: String? = ServiceProcess.adminToken) async throws -> Reply {
        try await send(json, to: url, method: "PUT", token: token)
    }

    private static func send(_ json: String, to url: String, method: String, token: String?) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = Data(json.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return try await send(request, token: token)
    }

    private static func send(_ request: URLRequest, token: String?) async throws -> Reply {
        var request = request
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        return Reply(status: http.statusCode, body: data, headers: http.allHeaderFields)
    }
}

/// A TCP port nothing listens on right now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw TestEnvironment.Missing(description: "cannot find a free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
