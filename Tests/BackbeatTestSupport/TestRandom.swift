import Foundation
import Testing

/// The one source of the tests' random choices (mutation positions, kill and sleep delays, generated cases).
///
/// A run draws one seed: `BACKBEAT_TEST_SEED` when set, a fresh one otherwise. Each test derives its own generator
/// from that seed and its own name, so replaying a seed replays every test's choices whatever ran before it, alone or
/// in the whole suite. Tests that draw from it carry the `.seeded` trait, which adds the seed to every issue they
/// record: a failure prints the command that repeats it.
public struct TestRandom: RandomNumberGenerator, Sendable {
    /// The run's seed.
    public static let seed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["BACKBEAT_TEST_SEED"] {
            guard let seed = UInt64(text) else { fatalError("BACKBEAT_TEST_SEED must be a decimal UInt64, not \(text)") }
            return seed
        }
        var system = SystemRandomNumberGenerator()
        return system.next()
    }()

    private var state: UInt64

    /// The generator of one test: the run's seed mixed with the test's file and function names.
    public init(file: String = #fileID, function: String = #function) {
        self.init(seed: Self.seed, stream: file + "/" + function)
    }

    /// The generator a seed and a stream name give; the same pair always gives the same choices.
    public init(seed: UInt64, stream: String) {
        // FNV-1a of the name: stable across runs and platforms, unlike Hasher.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in stream.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        state = seed ^ hash
    }

    /// SplitMix64: small, fast, and every 64-bit state is a valid one.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// What a failing seeded test adds to its issues.
    public static var replayHint: String {
        "random choices from seed \(seed): repeat them with BACKBEAT_TEST_SEED=\(seed)"
    }
}

extension Trait where Self == IssueHandlingTrait {
    /// Marks a test whose data or schedule comes from `TestRandom`: each issue it records names the run's seed.
    public static var seeded: Self {
        .compactMapIssues { issue in
            var issue = issue
            issue.comments.append(Comment(rawValue: TestRandom.replayHint))
            return issue
        }
    }
}
