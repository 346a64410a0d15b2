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
    let records: [EventRecord] = values.compactMap { try? EventDecoder.decodeRecord($0, now: now).get() }
    precondition(records.count == values.count, "the generator's messages are valid")
    // Page events alone (docs/events.md, "Page events"): views, sections, blocks and calls to action.
    var pageGenerator = EventGenerator(.init(seed: 9, artists: 200, days: 35, start: CivilDate(year: 2026, month: 9, day: 1), pageFraction: 1))
    let pageValues: [[UInt8]] = (0..<1000).map { _ in pageGenerator.next().value! }
    let pageRecords: [EventRecord] = pageValues.compactMap { try? EventDecoder.decodeRecord($0, now: now).get() }
    precondition(pageRecords.count == pageValues.count, "the generator's page messages are valid")
    let listenerHashes: [Int64] = (0..<1000).map { MurmurHash3.hash64("listener-\($0)") }
    // 35 days of 3,000 listeners each, overlapping from day to day: dense sketches (registers).
    let daySketches: [HyperLogLog] = (0..<35).map { day in
        var sketch = HyperLogLog()
        for listener in 0..<3_000 { sketch.add(hash: MurmurHash3.hash64("l\(listener * 7 + day * 131)")) }
        return sketch
    }
    let partition = TopicPartition(topic: "streams", partition: 0)
    let poll = values.enumerated().map { index, value in
        ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: Int64(index)), key: nil, value: value)
    }

    Benchmark("Parse and validate an event (\(bytes / values.count) bytes on average)") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(EventDecoder.decodeRecord(values[index], now: now))
        }
    }

    Benchmark("Add a decoded event to a partition's interned delta (hourly cells and listener plays)") { benchmark in
        var delta = InternedDelta()
        for index in benchmark.scaledIterations {
            values[index % values.count].withUnsafeBytes { delta.add(records[index % records.count], in: $0) }
        }
        blackHole(delta)
    }

    Benchmark("Parse and validate a page event (\(pageValues.reduce(0) { $0 + $1.count } / pageValues.count) bytes on average)") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(EventDecoder.decodeRecord(pageValues[index % pageValues.count], now: now))
        }
    }

    Benchmark("Add a decoded page event to a partition's interned delta") { benchmark in
        var delta = InternedDelta()
        for index in benchmark.scaledIterations {
            pageValues[index % pageValues.count].withUnsafeBytes { delta.add(pageRecords[index % pageRecords.count], in: $0) }
        }
        blackHole(delta)
    }

    Benchmark("Consume a poll of 1000 messages: IngestState.consumed (validate, intern, queue for memory)", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            var state = IngestState(memory: true)
            state.assigned([partition])
            if let planned = state.nextStoredOffsetRead() {
                state.storedOffsetsRead(planned.read, [:])
                for seek in state.takeSeeks() { state.sought(seek) }
            }
            blackHole(state.consumed(poll, now: now))
            blackHole(state.queuedMemoryChanges)
        }
    }

    Benchmark("HyperLogLog insert, explicit then registers") { benchmark in
        var sketch = HyperLogLog()
        for index in benchmark.scaledIterations {
            sketch.add(hash: listenerHashes[index] &+ Int64(index))
        }
        blackHole(sketch.cardinality)
    }

    Benchmark("HyperLogLog merge of a 35-day window", configuration: .init(scalingFactor: .one)) { _ in
        var window = HyperLogLog()
        for day in daySketches { window.formUnion(day) }
        blackHole(window.cardinality)
    }

    Benchmark("HyperLogLog cardinality of 28 dense day sketches (a streams answer's listeners per day)", configuration: .init(scalingFactor: .one)) { _ in
        for day in daySketches.prefix(28) { blackHole(day.cardinality) }
    }

    Benchmark("MurmurHash3 of a listener id") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(MurmurHash3.hash64("listener-\(index)"))
        }
    }

    // MARK: - In-memory buckets: a 35-day window of 200 artists (350k events), open and sealed

    let windowStart = CivilDate(year: 2026, month: 9, day: 1)
    var windowGenerator = EventGenerator(.init(seed: 11, artists: 200, days: 35, start: windowStart))
    var windowDelta = InternedDelta()
    var smallDeltas: [InternedDelta] = Array(repeating: InternedDelta(), count: 50)
    var windowJSONBytes = 0
    for index in 0..<350_000 {
        guard let value = windowGenerator.next().value, let record = try? EventDecoder.decodeRecord(value, now: now).get() else { continue }
        windowJSONBytes += value.count
        value.withUnsafeBytes { bytes in
            windowDelta.add(record, in: bytes)
            if index < 50_000 { smallDeltas[index / 1000].add(record, in: bytes) }
        }
    }
    var openWindow = CubeMemory()
    openWindow.add(windowDelta)
    var sealedWindow = openWindow
    sealedWindow.seal(daysBefore: .max)
    let firstDay = windowStart.daysSinceEpoch
    let window35 = QueryInterval(from: Timestamp(seconds: firstDay * 86_400), to: Timestamp(seconds: (firstDay + 35) * 86_400))
    let artist = EventGenerator.artistID(0)

    Benchmark("Bucket update: a flushed delta of 1000 events added to the open cubes", configuration: .init(scalingFactor: .one)) { benchmark in
        var memory = CubeMemory()
        for index in benchmark.scaledIterations {
            memory.add(smallDeltas[index % smallDeltas.count])
        }
        blackHole(memory)
    }

    Benchmark("The artists and days of a delta of 1000 events (what a poll moves of the answers' stamps)", configuration: .init(scalingFactor: .one)) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(smallDeltas[index % smallDeltas.count].artistDays)
        }
    }

    // Page events in deltas of 1000, as polls of the page topic hand them over (the generator's mix of the four types).
    let pageDeltas: [InternedDelta] = (0..<20).map { _ in
        var delta = InternedDelta()
        for _ in 0..<1000 {
            guard let value = pageGenerator.next().value, let record = try? EventDecoder.decodeRecord(value, now: now).get() else { continue }
            value.withUnsafeBytes { delta.add(record, in: $0) }
        }
        return delta
    }

    Benchmark("Bucket update: a delta of 1000 page events added to the open cubes and visitor sketches", configuration: .init(scalingFactor: .one)) { benchmark in
        var memory = CubeMemory()
        for index in benchmark.scaledIterations {
            memory.add(pageDeltas[index % pageDeltas.count])
        }
        blackHole(memory)
    }

    Benchmark("A flush's visitor sketches of a delta of 1000 page events (by artist, page and source)", configuration: .init(scalingFactor: .one)) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(pageDeltas[index % pageDeltas.count].visitors)
        }
    }

    Benchmark(
        "Seal 35 days of cubes (custom: sealed bytes per 100 non-zero cells, raw JSON bytes per 100 sealed bytes)",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal, .custom("bytes per 100 cells"), .custom("JSON bytes per 100 sealed bytes", polarity: .prefersLarger)],
            scalingFactor: .one)
    ) { benchmark in
        var memory = openWindow
        benchmark.startMeasurement()
        memory.seal(daysBefore: .max)
        benchmark.stopMeasurement()
        let footprint = memory.sealedFootprint
        benchmark.measurement(.custom("bytes per 100 cells"), footprint.bytes * 100 / max(1, footprint.nonZeroCells))
        benchmark.measurement(.custom("JSON bytes per 100 sealed bytes", polarity: .prefersLarger), windowJSONBytes * 100 / max(1, footprint.bytes))
    }

    Benchmark("Query 35 sealed days in memory: one artist's streams by day", configuration: .init(scalingFactor: .one)) { benchmark in
        let query = Query(dataset: .streams, interval: window35, granularity: .day, filters: [.artistID: [artist]])
        for _ in benchmark.scaledIterations { blackHole(sealedWindow.rows(for: query)) }
    }

    Benchmark("Query 35 sealed days in memory: one artist's top tracks", configuration: .init(scalingFactor: .one)) { benchmark in
        let query = Query(dataset: .streams, interval: window35, granularity: .all, groupBy: [.trackID], filters: [.artistID: [artist]])
        for _ in benchmark.scaledIterations { blackHole(sealedWindow.rows(for: query)) }
    }

    // One artist's top tracks over 28 days, from the blocks PostgreSQL returns for them (the cube the query plans),
    // as an answer without memory decodes and sums them.
    let window28 = QueryInterval(from: window35.from, to: Timestamp(seconds: (firstDay + 28) * 86_400))
    let topTracks28 = Query(dataset: .streams, interval: window28, granularity: .all, groupBy: [.trackID], filters: [.artistID: [artist]])
    let trackCube = BlockAnswer(topTracks28).stored
    let storedTrackDays = ArtistDayRows(windowDelta).days(of: trackCube)
        .filter { windowDelta.values[$0.artist] == artist && $0.day < firstDay + 28 }
        .map { (day: $0.day, block: CubeBlock.encode($0, of: trackCube, values: windowDelta.values)) }

    Benchmark("Sum 28 stored day blocks: one artist's top tracks (\(storedTrackDays.count) blocks decoded and summed)", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            var answer = BlockAnswer(topTracks28)
            for stored in storedTrackDays { answer.add(artist: artist, day: stored.day, try CubeBlock.decode(stored.block, of: trackCube)) }
            blackHole(answer.rows)
        }
    }

    Benchmark("Listeners of one artist over 28 days in memory", configuration: .init(scalingFactor: .one)) { benchmark in
        let scope = ListenerScope(artistID: artist, days: firstDay..<firstDay + 28)
        for _ in benchmark.scaledIterations { blackHole(sealedWindow.listenerSketches(scope, granularity: .all)[nil]?.cardinality) }
    }
}
