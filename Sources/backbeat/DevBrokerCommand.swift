import ArgumentParser
import BackbeatKafka
import Foundation

/// `backbeat dev-broker`: a local Kafka-protocol broker for development and tests.
struct DevBrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev-broker",
        abstract: "Run a local Kafka-protocol broker (librdkafka's mock cluster): in memory, about 5 MB kept per partition, not durable.")

    @Option(help: "Partitions per topic.")
    var partitions: Int32 = 12

    @Option(help: "Comma-separated topics to create.")
    var topics: String = "streams,revenue,social,page"

    @Option(name: .customLong("bootstrap-file"), help: "Also write the bootstrap address to this file.")
    var bootstrapFile: String?

    func run() async throws {
        let topicList = topics.split(separator: ",").map(String.init)
        let broker = try DevBroker(topics: topicList, partitions: partitions)
        FileHandle.standardOutput.write(Data((broker.bootstrapServers + "\n").utf8))
        if let bootstrapFile {
            try (broker.bootstrapServers + "\n").write(toFile: bootstrapFile, atomically: true, encoding: .utf8)
        }
        await waitForTerminationSignal()
        withExtendedLifetime(broker) {}
    }
}

/// Suspends until SIGINT or SIGTERM arrives.
func waitForTerminationSignal() async {
    let (stream, continuation) = AsyncStream<Void>.makeStream()
    var sources: [any DispatchSourceSignal] = []
    for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
        source.setEventHandler { continuation.finish() }
        source.resume()
        sources.append(source)
    }
    for await _ in stream {}
    sources.forEach { $0.cancel() }
}
