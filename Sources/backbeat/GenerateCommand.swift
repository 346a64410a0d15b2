import ArgumentParser
import BackbeatArchive
import BackbeatCore
import BackbeatKafka
import Foundation

/// `backbeat generate`: deterministic synthetic events to a file or to Kafka.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write deterministic synthetic events: NDJSON to --out, an archive to --archive, or to Kafka with --brokers.")

    @Option(help: "Number of messages.") var events: Int = 10_000
    @Option(help: "Random seed; the same settings give the same events.") var seed: UInt64 = 1
    @Option(help: "Number of artists.") var artists: Int = 50
    @Option(help: "Days the events spread over.") var days: Int = 30
    @Option(help: "First day (YYYY-MM-DD, UTC). Default: today minus --days.") var start: String?
    @Option(name: .customLong("invalid-fraction"), help: "Fraction (0-1) of deliberately invalid messages.") var invalidFraction: Double = 0
    @Option(help: "Write NDJSON here ('-' for stdout; a name ending in .zst is zstd-compressed). Null values are skipped.") var out: String?
    @Option(help: "Kafka bootstrap servers to publish to instead of a file.") var brokers: String?
    @Option(help: "Write an archive here, in the format of serve --archive-dir, as if a consumer had read the events from --partitions partitions per topic (keyed by artist).")
    var archive: String?
    @Option(help: "Partitions per topic of --archive.") var partitions: Int32 = 4
    @Option(help: "Message keys when publishing: 'artist' (the artist id, so an artist stays on one partition), 'event' (the event id: spread evenly, and a resend goes where its event went) or 'none' (spread evenly; use with the dev broker, whose partitions keep only about 5 MB).")
    var keys: String = "artist"

    @Option(name: .customLong("resend-fraction"), help: "Fraction (0-1) of messages that resend one of the last 1000 (the same bytes, as a producer's retry sends them).")
    var resendFraction: Double = 0

    @Option(help: "With --brokers: publish at most this many events per second, evenly, each topic's keyless events of 50 ms as one message set on one partition (default: as fast as the broker takes them, spread over the partitions one by one).")
    var rate: Double?

    @Option(name: .customLong("page-fraction"), help: "Fraction (0-1) of valid events that are page events (docs/events.md, \"Page events\"); 0 makes the same events as before page events existed.")
    var pageFraction: Double = 0

    @Option(help: "Topics for stream, revenue, social and page events, in that order (one topic: all go there; the page topic is needed only with --page-fraction).")
    var topics: String = "streams,revenue,social,page"

    func validate() throws {
        guard [out, brokers, archive].compactMap({ $0 }).count == 1 else { throw ValidationError("give exactly one of --out, --archive and --brokers") }
        guard partitions >= 1 else { throw ValidationError("--partitions must be >= 1") }
        guard events >= 0, artists >= 1, days >= 1 else { throw ValidationError("--events must be >= 0, --artists and --days >= 1") }
        guard (0...1).contains(invalidFraction) else { throw ValidationError("--invalid-fraction must be between 0 and 1") }
        guard (0...1).contains(pageFraction) else { throw ValidationError("--page-fraction must be between 0 and 1") }
        let topicCount = topics.split(separator: ",").count
        guard [1, 3, 4].contains(topicCount) else { throw ValidationError("--topics takes one, three or four topics") }
        guard topicCount != 3 || pageFraction == 0 else { throw ValidationError("--page-fraction needs a fourth topic in --topics, for page events") }
        guard ["artist", "event", "none"].contains(keys) else { throw ValidationError("--keys is artist, event or none") }
        guard (0...1).contains(resendFraction) else { throw ValidationError("--resend-fraction must be between 0 and 1") }
        if let rate {
            guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number of events per second") }
            guard brokers != nil else { throw ValidationError("--rate paces publishing: give it with --brokers") }
        }
    }

    /// A bulk load spreads keyless messages over the partitions one by one.
    static let bulkProducer = ["sticky.partitioning.linger.ms": "0"]
    /// Paced, each topic's keyless messages of 50 ms go to one partition as one message set, as a producer with
    /// some linger sends them. The dev broker finds a fetch's offset by walking its partition's message sets from the
    /// oldest, so one set per message would have it spend a core on the consumer's fetches within minutes.
    static let pacedProducer = ["linger.ms": "50", "sticky.partitioning.linger.ms": "50"]

    func run() async throws {
        let startDate: CivilDate
        if let start {
            guard let parsed = RFC3339.parseDate(start) else { throw ValidationError("--start must be YYYY-MM-DD") }
            startDate = parsed
        } else {
            let today = Timestamp.wallClock().daysSinceEpoch
            startDate = CivilDate(daysSinceEpoch: today - Int64(days))
        }
        var generator = EventGenerator(.init(
            seed: seed, artists: artists, days: days, start: startDate, invalidFraction: invalidFraction, resendFraction: resendFraction,
            pageFraction: pageFraction))
        let topicList = topics.split(separator: ",").map(String.init)
        func topic(for type: EventType) -> String {
            type.topic(among: topicList)!
        }

        var written = 0
        let progressStep = max(100_000, events / 10)
        func reportProgress() {
            if written % progressStep == 0 && written < events {
                FileHandle.standardError.write(Data("generated \(written) of \(events) events\n".utf8))
            }
        }
        if let brokers {
            let producer = try KafkaProducer(brokers: brokers, extra: KafkaConfiguration(rate == nil ? Self.bulkProducer : Self.pacedProducer))
            let started = ContinuousClock.now
            for index in 0..<events {
                // Paced: event `index` goes out no sooner than index / rate seconds after the start.
                if let rate, index % 100 == 0 {
                    try await Task.sleep(until: started + .nanoseconds(Int64(Double(index) / rate * 1e9)), clock: .continuous)
                }
                let message = generator.next()
                let key: [UInt8]? = switch keys {
                case "artist": Array(message.key.utf8)
                case "event": message.event.map { Array($0.eventID.utf8) } ?? Array(message.key.utf8)
                default: nil
                }
                try producer.send(topic: topic(for: message.topic), key: key, value: message.value)
                written += 1
                reportProgress()
            }
            let deliveries = try producer.flush()
            guard deliveries.failed == 0 else {
                throw ValidationError("\(deliveries.failed) messages failed delivery: \(deliveries.lastError ?? "")")
            }
            FileHandle.standardError.write(Data("published \(deliveries.delivered) messages to \(brokers)\n".utf8))
        } else if let archive {
            try writeArchive(to: archive, generator: &generator, topic: topic, reportProgress: { written += 1; reportProgress() })
            FileHandle.standardError.write(Data("wrote \(written) messages to the archive \(archive)\n".utf8))
        } else if let out {
            let handle: FileHandle
            if out == "-" {
                handle = .standardOutput
            } else {
                guard FileManager.default.createFile(atPath: out, contents: nil) else { throw ValidationError("cannot create \(out)") }
                handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            }
            let compressor = out.hasSuffix(".zst") ? ZstdFrameWriter(handle: handle) : nil
            var buffer: [UInt8] = []
            func emit() throws {
                if let compressor { try compressor.write(buffer) } else { handle.write(Data(buffer)) }
                buffer.removeAll(keepingCapacity: true)
            }
            for _ in 0..<events {
                let message = generator.next()
                guard let value = message.value else { continue }
                buffer += value
                buffer.append(UInt8(ascii: "\n"))
                written += 1
                reportProgress()
                if buffer.count > 1 << 20 { try emit() }
            }
            try emit()
            try compressor?.flush()
            if out != "-" {
                try handle.close()
                FileHandle.standardError.write(Data("wrote \(written) events to \(out)\n".utf8))
            }
        }
    }

    /// Writes the messages as archive segments: each artist's messages on one partition per topic, offsets counted
    /// per partition, consumed "now".
    private func writeArchive(to directory: String, generator: inout EventGenerator, topic: (EventType) -> String, reportProgress: () -> Void) throws {
        let writer = try ArchiveWriter(directory: URL(fileURLWithPath: directory), segmentBytes: 128 << 20)
        let now = Timestamp.wallClock()
        var lines: [TopicPartition: [UInt8]] = [:]
        var flushed: [TopicPartition: Int64] = [:]
        var next: [TopicPartition: Int64] = [:]
        var buffered = 0
        func flush() throws {
            let parts = lines.map { partition, archive in
                FlushBatch.Part(topicPartition: partition, generation: 0, expectedOffset: flushed[partition],
                                newOffset: next[partition]!, archive: archive)
            }
            _ = try writer.append(parts, now: now)
            writer.committed()
            try writer.sealFinished(now: now, keeping: nil)
            for part in parts { flushed[part.topicPartition] = part.newOffset }
            lines = [:]
            buffered = 0
        }
        for _ in 0..<events {
            let message = generator.next()
            let partition = TopicPartition(topic: topic(message.topic), partition: Int32(UInt64(bitPattern: MurmurHash3.hash64(message.key)) % UInt64(partitions)))
            let offset = next[partition, default: 0]
            next[partition] = offset + 1
            let consumed = ConsumedMessage(position: MessagePosition(topicPartition: partition, offset: offset),
                                           key: Array(message.key.utf8), value: message.value, timestampMilliseconds: now.microseconds / 1000)
            let before = lines[partition, default: []].count
            ArchiveLine.appendMessage(consumed, consumedAt: now, to: &lines[partition, default: []])
            buffered += lines[partition]!.count - before
            reportProgress()
            if buffered > 4 << 20 { try flush() }
        }
        try flush()
        try writer.closeAll()
    }
}
