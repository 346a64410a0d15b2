import BackbeatTestSupport
import Testing

/// The tests' random choices repeat from a seed: the same seed and test give the same choices, and tests of one run
/// draw different ones.
struct TestRandomTests {
    static func draws(_ random: TestRandom) -> [UInt64] {
        var random = random
        return (0..<8).map { _ in random.next() }
    }

    @Test func aSeedAndATestGiveTheSameChoicesEveryTime() {
        let first = Self.draws(TestRandom(seed: 3_068_754_712_006_177_417, stream: "Suite/test()"))
        #expect(first == Self.draws(TestRandom(seed: 3_068_754_712_006_177_417, stream: "Suite/test()")))
        #expect(first != Self.draws(TestRandom(seed: 3_068_754_712_006_177_418, stream: "Suite/test()")))
        #expect(first != Self.draws(TestRandom(seed: 3_068_754_712_006_177_417, stream: "Suite/other()")))
        #expect(Set(first).count == first.count)
    }

    @Test func aTestsGeneratorIsNamedByItsFileAndFunction() {
        #expect(Self.draws(TestRandom()) == Self.draws(TestRandom(seed: TestRandom.seed, stream: "BackbeatCoreTests/TestRandomTests.swift/aTestsGeneratorIsNamedByItsFileAndFunction()")))
    }
}
