@testable import BackbeatServer
import Foundation
import Testing

/// The bounded awaits of calls that may never return.
@Suite struct BoundedWaitTests {
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
