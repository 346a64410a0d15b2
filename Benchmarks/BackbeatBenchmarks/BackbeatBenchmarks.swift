import BackbeatCore
import Benchmark

/// Hot paths of the core, each measured per event (or per sketch) so throughput reads as items per second.
/// Run with `swift package benchmark --target BackbeatBenchmarks` (scripts/bench runs the side-by-side peers).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(2))

    // The generator's events: 1000 distinct messages, as the ingest path sees them.
    var generator = EventGenerator(.init(seed: 9, artists: 200, days: 35, start: CivilDate(year: 2026, month: 9, day: 1)))
    let values: [[UInt8]] = (0..<1000).map { _ in generator.next().value! }
    let bytes = values.reduce(0) { $0 + $1.count }
    let now = Timestamp(seconds: 1_900_000_000)
    let events: [Event] = values.compactMap { try? EventDecoder.decode($0, now: now).get() }
    let listenerHashes: [Int64] = (0..<1000).map { MurmurHash3.hash64("listener-\($0)") }

    Benchmark("Parse and validate an event (\(bytes / values.count) bytes on average)") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(EventDecoder.decode(values[index], now: now))
        }
    }

    Benchmark("Add an event to the rollup delta (hourly rows and listener sketches)") { benchmark in
        var delta = RollupDelta()
        for index in benchmark.scaledIterations {
            delta.add(events[index % events.count])
        }
        blackHole(delta)
    }

    Benchmark("HyperLogLog insert, explicit then registers") { benchmark in
        var sketch = HyperLogLog()
        for index in benchmark.scaledIterations {
            sketch.add(hash: listenerHashes[index] &+ Int64(index))
        }
        blackHole(sketch.cardinality)
    }

    Benchmark("HyperLogLog merge of a 35-day window", configuration: .init(scalingFactor: .one)) { benchmark in
        var days: [HyperLogLog] = []
        for day in 0..<35 {
            var sketch = HyperLogLog()
            for listener in 0..<3_000 { sketch.add(hash: MurmurHash3.hash64("l\(listener * 7 + day * 131)")) }
            days.append(sketch)
        }
        benchmark.startMeasurement()
        var window = HyperLogLog()
        for day in days { window.formUnion(day) }
        blackHole(window.cardinality)
    }

    Benchmark("MurmurHash3 of a listener id") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(MurmurHash3.hash64("listener-\(index)"))
        }
    }
}
