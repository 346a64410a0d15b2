import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback in front of the test PostgreSQL that, once armed, loses the answer to one COMMIT of a
/// transaction that COPYed (a flush): it stops passing PostgreSQL's bytes back, forwards the COMMIT, lets
/// PostgreSQL run it, then closes that connection. The client sees its commit fail although it landed.
final class CommitAnswerLosingProxy: @unchecked Sendable {
    /// The database URL through the proxy.
    let url: String
    private let targetPort: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var armed = false
    private var lost = 0

    init(postgresURL: String) throws {
        guard var components = URLComponents(string: postgresURL), let port = components.port else {
            throw TestEnvironment.Missing(description: "no port in \(postgresURL)")
        }
        targetPort = UInt16(port)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw TestEnvironment.Missing(description: "proxy cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        components.port = Int(UInt16(bigEndian: address.sin_port))
        url = components.string!
        Thread { [self] in acceptLoop() }.start()
    }

    /// Loses the answer to the next COMMIT of a transaction that COPYed.
    func arm() {
        lock.withLock { armed = true }
    }

    /// How many COMMIT answers were lost.
    var answersLost: Int { lock.withLock { lost } }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            let connection = Connection(client: client, server: server)
            Thread { [self] in pumpToServer(connection) }.start()
            Thread { [self] in pumpToClient(connection) }.start()
        }
    }

    /// One proxied connection; `muted` drops PostgreSQL's bytes.
    private final class Connection: @unchecked Sendable {
        let client: Int32
        let server: Int32
        let lock = NSLock()
        var muted = false

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        func cut() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }
    }

    private func pumpToServer(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var copied = false
        while true {
            let count = read(connection.client, &buffer, buffer.count)
            guard count > 0 else { break }
            let chunk = Array(buffer[0..<count])
            if Self.contains(chunk, "COPY ") { copied = true }
            // The statement postgres-nio ends a transaction with ("ON COMMIT" inside another statement is not it).
            let commit = Self.contains(chunk, "COMMIT;")
            let lose = commit && copied && lock.withLock {
                guard armed else { return false }
                armed = false
                lost += 1
                return true
            }
            if commit { copied = false }
            if lose { connection.lock.withLock { connection.muted = true } }
            guard Self.writeAll(connection.server, chunk) else { break }
            if lose {
                // PostgreSQL commits on reading the COMMIT; its answer never reaches the client.
                Thread.sleep(forTimeInterval: 0.5)
                break
            }
        }
        connection.cut()
    }

    private func pumpToClient(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(connection.server, &buffer, buffer.count)
            guard count > 0 else { break }
            if connection.lock.withLock({ connection.muted }) { continue }
            guard Self.writeAll(connection.client, Array(buffer[0..<count])) else { break }
        }
        connection.cut()
        Glibc.close(connection.client)
        Glibc.close(connection.server)
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in bytes[start..<start + needle.count].elementsEqual(needle) }
    }

    private static func writeAll(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
