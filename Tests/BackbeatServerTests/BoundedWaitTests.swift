@testable import BackbeatServer
import Foundation
import Testing

/// The bounded waits: the Kafka polling thread's for PostgreSQL inside a rebalance callback, and the awaits of calls that
/// may never return.
@Suite struct BoundedWaitTests {
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

    /// A blocking call awaited with a limit (leaving a group whose broker is gone): its result when it returns in
    /// time; at the limit, or when the awaiting task is cancelled, the wait ends while the call goes on alone.
    @Test func aBlockingCallIsAwaitedAtMostItsLimit() async throws {
        #expect(try await awaitBlocking(limit: .seconds(5)) { 42 } == 42)

        let released = DispatchSemaphore(value: 0)
        defer { released.signal(); released.signal() }
        let started = ContinuousClock.now
        await #expect(throws: WaitTimedOut.self) {
            try await awaitBlocking(limit: .milliseconds(200)) { released.wait() }
        }
        #expect(ContinuousClock.now - started < .seconds(20))

        let waiting = Task { try await awaitBlocking(limit: .seconds(60)) { released.wait() } }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(ContinuousClock.now - started < .seconds(20), "cancellation ended the wait, not the 60 s limit")
    }

    /// Async work awaited with a limit (a compaction round whose statement may never return): its result when it
    /// returns in time; at the limit, or when the awaiting task is cancelled, the wait ends even though the work
    /// ignores its cancellation.
    @Test func anAsyncCallIsAwaitedAtMostItsLimit() async throws {
        #expect(try await awaitTask(limit: .seconds(5)) { 42 } == 42)
        struct Failed: Error {}
        await #expect(throws: Failed.self) { try await awaitTask(limit: .seconds(5)) { () async throws -> Int in throw Failed() } }

        // Work that ignores cancellation: it waits for a semaphore on a dispatch thread, released after 30 s (so that a
        // wait without its bound fails the checks below instead of hanging).
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(30)) { released.signal(); released.signal() }
        let ignoring: @Sendable () async -> Void = {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { released.wait(); continuation.resume() }
            }
        }
        let started = ContinuousClock.now
        await #expect(throws: WaitTimedOut.self) { try await awaitTask(limit: .milliseconds(200)) { await ignoring() } }
        #expect(ContinuousClock.now - started < .seconds(20))

        let waiting = Task { try await awaitTask(limit: .seconds(60)) { await ignoring() } }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(ContinuousClock.now - started < .seconds(20), "cancellation ended the wait, not the 60 s limit")
    }
}
