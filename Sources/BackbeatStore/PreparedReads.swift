import Logging
import PostgresNIO
import Synchronization

/// The statement texts the query path sends, each prepared once per connection of the read pool (`Store.readClient`)
/// and run by name from then on: PostgreSQL parses, analyzes and plans a text once per connection instead of once per
/// statement (about 38% of its time per answer, measured; see docs/performance.md).
///
/// PostgresNIO names a prepared statement by its type (`PostgresPreparedStatement.name` and `.sql` are static), while
/// the query path's texts are made at run time, one per cube, table and filter. So each text gets a number the first
/// time it is sent, and each number a type, `ReadStatement<N>`, where `N` spells the number in binary digits
/// (`StatementNumber`). The texts carry no values (every value is bound), so there are few of them; past `capacity`
/// a text is sent unnamed, planned each time it runs.
///
/// A text's binds must have the same types every time it is sent (PostgreSQL fixes a prepared statement's parameter
/// types when it prepares it): the query path's do, by construction; a mismatch is an error, never a wrong answer.
final class PreparedReads: Sendable {
    /// The texts prepared by every store of the process: the numbers are names on PostgreSQL's connections, so a
    /// number never changes its text.
    static let shared = PreparedReads(capacity: 256)

    let capacity: Int
    private let state = Mutex(Numbered())

    private struct Numbered {
        var numbers: [String: Int] = [:]
        var texts: [String] = []
        var turnedAwayOne = false
    }

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// How a text is sent.
    enum Sending {
        /// Prepared, by the type that names it.
        case named(any StatementNumber.Type)
        /// Unnamed: `capacity` texts have numbers; `first` when no text was turned away before.
        case unnamed(first: Bool)
    }

    /// How `sql` is sent: by its number (given it if it is new), or unnamed once `capacity` texts have numbers.
    func sending(_ sql: String) -> Sending {
        state.withLock { state in
            if let number = state.numbers[sql] { return .named(Self.type(of: number)) }
            guard state.texts.count < capacity else {
                defer { state.turnedAwayOne = true }
                return .unnamed(first: !state.turnedAwayOne)
            }
            state.numbers[sql] = state.texts.count
            state.texts.append(sql)
            return .named(Self.type(of: state.texts.count - 1))
        }
    }

    /// The text numbered `number`.
    func text(_ number: Int) -> String {
        state.withLock { $0.texts[number] }
    }

    /// How many texts have numbers.
    var count: Int { state.withLock { $0.texts.count } }

    /// The type whose `value` is `number`: its binary digits, the most significant innermost.
    static func type(of number: Int) -> any StatementNumber.Type {
        precondition(number >= 0)
        if number == 0 { return NumberZero.self }
        return type(of: number / 2).appending(digit: number % 2)
    }
}

/// A number spelled as a type, for `ReadStatement`'s static name and text.
protocol StatementNumber {
    static var value: Int { get }
}

extension StatementNumber {
    /// The number this one's binary digits followed by `digit` spell.
    static func appending(digit: Int) -> any StatementNumber.Type {
        digit == 0 ? DigitZero<Self>.self : DigitOne<Self>.self
    }

    /// Runs the text numbered `value` with `binds` on `connection`, else on a connection of `pool`, preparing it
    /// there first if it is new there.
    static func run(_ binds: PostgresBindings, on connection: PostgresConnection?, else pool: PostgresClient, logger: Logger) async throws -> Store.ReadRows {
        let statement = ReadStatement<Self>(bindings: binds)
        if let connection { return try await connection.execute(statement, logger: logger) }
        return try await pool.execute(statement, logger: logger)
    }
}

/// Zero.
enum NumberZero: StatementNumber {
    static var value: Int { 0 }
}

/// `Higher`'s value followed by the binary digit 0.
enum DigitZero<Higher: StatementNumber>: StatementNumber {
    static var value: Int { Higher.value * 2 }
}

/// `Higher`'s value followed by the binary digit 1.
enum DigitOne<Higher: StatementNumber>: StatementNumber {
    static var value: Int { Higher.value * 2 + 1 }
}

/// The query path's text numbered `N.value`, with the binds of one run; rows come back undecoded, as from a query.
struct ReadStatement<N: StatementNumber>: PostgresPreparedStatement {
    typealias Row = PostgresRow

    static var name: String { "backbeat_read_\(N.value)" }
    static var sql: String { PreparedReads.shared.text(N.value) }

    /// The parameter types come from the first run's binds (`bindingDataTypes` empty).
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
