import BackbeatCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// `backbeat-load`: an open-loop HTTP load generator for scripts/bench (wrk2 is not packaged here). Request `i` is
/// due at `start + i / rate` whatever happened to the earlier ones; it goes out on the first idle keep-alive
/// connection, and its latency counts from the moment it was due, so time spent waiting for a connection is counted
/// (no coordinated omission). Paths are drawn at random (seeded) from a file, one per line. One event loop thread.
///
///     backbeat-load --port 8080 --rate 2000 --seconds 10 --connections 64 --paths paths.txt --token T \
///         [--accept-encoding 'gzip, deflate, br, zstd'] [--slow-log MS]
///
/// Prints one JSON object: the rate asked and achieved, requests, non-200 answers, p50/p99/p99.9/max in ms. With
/// `--slow-log MS`, each answer slower than MS milliseconds is also written to standard error as it arrives, one
/// line: `slow <wall-clock seconds since the epoch, as CLOCK_REALTIME> <latency ms> <path>`, so that a stall can be
/// laid beside what else the machine did then (`perf record -k CLOCK_REALTIME`, a server's log).
@main
struct LoadGenerator {
    static func main() {
        do {
            let options = try Options(Array(CommandLine.arguments.dropFirst()))
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { try? group.syncShutdownGracefully() }
            let loop = group.next()
            let report = try loop.flatSubmit { Driver.run(options, on: loop) }.wait()
            print(report)
        } catch {
            // A refused connection or a bad argument is a message and a non-zero exit, not a crash report.
            FileHandle.standardError.write(Data("backbeat-load: \(error)\n".utf8))
            exit(1)
        }
    }
}

struct Options {
    var host = "127.0.0.1"
    var port = 8080
    var rate = 1000.0
    var seconds = 10.0
    var connections = 64
    var paths: [String] = []
    var token: String?
    /// Sent as `Accept-Encoding` with every request (nil: no such field).
    var acceptEncoding: String?
    var seed: UInt64 = 1
    /// Answers slower than this many milliseconds are logged as they arrive (nil: none).
    var slowLogMilliseconds: Double?

    init(_ arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(message: "\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--host": host = try value()
            case "--port": port = Int(try value()) ?? 0
            case "--rate": rate = Double(try value()) ?? 0
            case "--seconds": seconds = Double(try value()) ?? 0
            case "--connections": connections = Int(try value()) ?? 0
            case "--token": token = try value()
            case "--accept-encoding": acceptEncoding = try value()
            case "--seed": seed = UInt64(try value()) ?? 1
            case "--slow-log":
                guard let milliseconds = Double(try value()), milliseconds >= 0 else { throw UsageError(message: "--slow-log needs milliseconds") }
                slowLogMilliseconds = milliseconds
            case "--paths":
                let file = try value()
                paths = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            default: throw UsageError(message: "unknown argument \(arguments[index])")
            }
            index += 1
        }
        guard port > 0, rate > 0, seconds > 0, connections > 0, !paths.isEmpty else {
            throw UsageError(message: "usage: backbeat-load --port P --rate R --seconds S --connections C --paths FILE [--token T] [--accept-encoding CODINGS] [--host H] [--seed N] [--slow-log MS]")
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// The run's state, confined to its event loop.
final class Driver {
    let options: Options
    let loop: any EventLoop
    let done: EventLoopPromise<String>
    var channels: [any Channel] = []
    var idle: [Int] = []
    /// When each connection's request in flight was due (nanoseconds of the loop's clock), and its path.
    var dueOfInFlight: [UInt64]
    var pathOfInFlight: [String]
    /// Requests due and not yet sent, by when they were due.
    var waiting: CircularBuffer<UInt64> = []
    var latencies: [UInt64] = []
    var errors = 0
    var scheduled = 0
    let total: Int
    var start: UInt64 = 0
    var random: SplitMix64

    init(options: Options, loop: any EventLoop) {
        self.options = options
        self.loop = loop
        self.done = loop.makePromise()
        self.total = Int(options.rate * options.seconds)
        self.dueOfInFlight = Array(repeating: 0, count: options.connections)
        self.pathOfInFlight = Array(repeating: "", count: options.connections)
        self.random = SplitMix64(seed: options.seed)
        latencies.reserveCapacity(total)
    }

    static func run(_ options: Options, on loop: any EventLoop) -> EventLoopFuture<String> {
        let driver = Driver(options: options, loop: loop)
        let bound = NIOLoopBound(driver, eventLoop: loop)
        let connecting = (0..<options.connections).map { index in
            ClientBootstrap(group: loop)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseHandler(driver: bound, connection: index))
                    }
                }
                .connect(host: options.host, port: options.port)
        }
        return EventLoopFuture.whenAllSucceed(connecting, on: loop).flatMap { channels in
            let driver = bound.value
            driver.channels = channels
            driver.idle = Array(channels.indices)
            driver.start = DispatchTime.now().uptimeNanoseconds
            loop.scheduleRepeatedTask(initialDelay: .zero, delay: .microseconds(500)) { task in
                if bound.value.tick() { task.cancel() }
            }
            return driver.done.futureResult
        }
    }

    /// Queues every request due by now and sends what idle connections can take. Answers whether all are scheduled.
    func tick() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        while scheduled < total {
            let due = start + UInt64(Double(scheduled) / options.rate * 1e9)
            guard due <= now else { break }
            waiting.append(due)
            scheduled += 1
        }
        dispatch()
        return scheduled == total
    }

    func dispatch() {
        while let connection = idle.last, let due = waiting.first {
            idle.removeLast()
            waiting.removeFirst()
            dueOfInFlight[connection] = due
            let path = options.paths[Int(random.next() % UInt64(options.paths.count))]
            pathOfInFlight[connection] = path
            var headers = HTTPHeaders([("Host", options.host), ("Connection", "keep-alive")])
            if let token = options.token { headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let codings = options.acceptEncoding { headers.add(name: "Accept-Encoding", value: codings) }
            let channel = channels[connection]
            channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }
    }

    func answered(on connection: Int, status: HTTPResponseStatus) {
        let latency = DispatchTime.now().uptimeNanoseconds - dueOfInFlight[connection]
        latencies.append(latency)
        if let slow = options.slowLogMilliseconds, Double(latency) / 1e6 > slow {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let line = String(format: "slow %ld.%06ld %.3f ", now.tv_sec, now.tv_nsec / 1000, Double(latency) / 1e6) + pathOfInFlight[connection] + "\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        if status != .ok { errors += 1 }
        idle.append(connection)
        dispatch()
        if latencies.count == total { finish() }
    }

    func failed(_ error: any Error) {
        done.fail(error)
    }

    func finish() {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let sorted = latencies.sorted()
        func percentile(_ q: Double) -> Double {
            let rank = min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[rank]) / 1e6
        }
        for channel in channels { channel.close(promise: nil) }
        done.succeed(String(format: """
            {"rate": %.1f, "achieved_rps": %.1f, "requests": %d, "non_200": %d, "p50_ms": %.3f, "p99_ms": %.3f, "p999_ms": %.3f, "max_ms": %.3f}
            """, options.rate, Double(sorted.count) / elapsed, sorted.count, errors, percentile(0.5), percentile(0.99), percentile(0.999),
            Double(sorted.last ?? 0) / 1e6))
    }
}

/// Hands each complete response to the driver.
final class ResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let driver: NIOLoopBound<Driver>
    let connection: Int
    var status: HTTPResponseStatus = .ok

    init(driver: NIOLoopBound<Driver>, connection: Int) {
        self.driver = driver
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = head.status
        case .body: break
        case .end: driver.value.answered(on: connection, status: status)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        driver.value.failed(error)
        context.close(promise: nil)
    }
}
