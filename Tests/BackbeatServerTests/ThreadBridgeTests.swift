@testable import BackbeatServer
import Foundation
import Testing

/// The bridge the Kafka polling thread uses to wait for PostgreSQL inside a rebalance callback.
@Suite struct ThreadBridgeTests {
    /// Runs `body` on a plain OS thread, as librdkafka's callbacks run, and hands back its result.
    static func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func aWaitReturnsTheWorksResultOrItsError() async throws {
        let value = await Self.onPlainThread { Result { try blockingAwait(limit: .seconds(5)) { 42 } } }
        #expect(try value.get() == 42)
        struct Failed: Error {}
        let failed = await Self.onPlainThread { Result { try blockingAwait(limit: .seconds(5)) { () async throws -> Int in throw Failed() } } }
        #expect(throws: Failed.self) { try failed.get() }
    }

    /// Work that does not finish (an unresponsive database) ends the wait at the limit, not when the work ends.
    @Test func aWaitEndsAtItsLimit() async {
        let started = ContinuousClock.now
        let outcome = await Self.onPlainThread {
            Result { try blockingAwait(limit: .milliseconds(200)) { try await Task.sleep(for: .seconds(30)) } }
        }
        let waited = ContinuousClock.now - started
        #expect(throws: WaitTimedOut.self) { try outcome.get() }
        #expect(waited < .seconds(20), "waited \(waited)")
    }
}
