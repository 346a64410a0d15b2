import BackbeatCore
import Testing

/// A union is the sketch of the union of the sets: the same state as adding every element to one sketch, whichever
/// modes (explicit, registers) the two sides are in.
@Suite struct HyperLogLogUnionTests {
    func sketch(_ ids: Range<Int>) -> HyperLogLog {
        var sketch = HyperLogLog()
        for id in ids { sketch.add("listener-\(id)") }
        return sketch
    }

    @Test(arguments: [
        (0..<10, 5..<20),             // explicit + explicit, overlapping
        (0..<700, 600..<1200),        // explicit + explicit, union still explicit (1200 <= 1280)
        (0..<1000, 500..<1500),       // explicit + explicit, union crosses into registers
        (0..<1280, 1280..<1281),      // exactly one past the explicit limit
        (0..<5000, 100..<300),        // registers + explicit
        (0..<300, 100..<5000),        // explicit + registers
        (0..<5000, 2500..<9000),      // registers + registers
        (0..<0, 0..<50),              // empty + explicit
    ])
    func unionEqualsTheSketchOfTheUnion(left: Range<Int>, right: Range<Int>) {
        var union = sketch(left)
        union.formUnion(sketch(right))
        let all = sketch(min(left.lowerBound, right.lowerBound)..<max(left.upperBound, right.upperBound))
        #expect(union == all)
        #expect(union.cardinality == all.cardinality)
    }
}
