import ArgumentParser

/// The `backbeat` command line.
@main
struct Backbeat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backbeat",
        abstract: "Analytics ingestion: Kafka events to exactly-once PostgreSQL rollups and a JSON query API.",
        subcommands: [ServeCommand.self, MigrateCommand.self, DevBrokerCommand.self, GenerateCommand.self, RollupCommand.self, ReplayCommand.self, RebuildCommand.self, TokenCommand.self, OffsetsCommand.self, ArtistCommand.self]
    )
}
