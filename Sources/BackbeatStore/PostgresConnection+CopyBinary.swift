import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `COPY table (columns) FROM STDIN (FORMAT binary)`, its body (`CopyBinaryEncoder`) written by `writeData`.
    ///
    /// postgres-nio 1.33.2 offers COPY FROM in text format only: `copyFrom` sends
    /// `COPY "table"("c1",...,"cN") FROM STDIN WITH (FORMAT text)`. Here the last column's name closes the list and
    /// states the binary format itself, and a comment takes the rest of that one-line statement. The names are this
    /// module's own identifiers, never input. Every flush test runs through it: a postgres-nio that quoted names
    /// differently would fail them all with a syntax error.
    func copyBinary(
        table: String, columns: [String], logger: Logger, writeData: (PostgresCopyFromWriter) async throws -> Void
    ) async throws {
        precondition(
            !columns.isEmpty && ([table] + columns).allSatisfy { $0.utf8.allSatisfy { $0 == UInt8(ascii: "_") || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) } },
            "COPY names its own tables and columns only"
        )
        var names = columns
        names[names.count - 1] += #"") FROM STDIN WITH (FORMAT binary) --"#
        try await copyFrom(table: table, columns: names, logger: logger, writeData: writeData)
    }
}
