import BackbeatCore

/// A stored aggregate as PostgreSQL holds it (migrations 0008 and 0010). Every aggregate has `<name>_merged`, one row
/// per key, and the view `<name>`, which every reader uses and sums (sum, hll_union_agg):
/// - a full hourly table and a listener sketch table also have `<name>_delta`, which takes the rows of each flush as
///   they come (COPY only, no key, no index); the view is both tables together;
/// - a derived cube (`Cube.isFull` false) has no delta table of its own: its view is its merged rows plus its full
///   table's delta rows summed to its key as they are read, and compaction writes its merged rows from the full rows
///   it moves (`derived`).
///
/// A full hourly table's delta names its dimension values by integers (migration 0011, `FlushValueIDs`): their texts
/// are in `<name>_delta_values`, and `<name>_delta_rows` is the delta with its texts.
///
/// `Store.compact()` moves delta rows into the merged tables.
struct AggregateTable: Sendable {
    /// The view's name; the tables are `merged` and, if `appended`, `delta`.
    var name: String
    /// The key columns: `artist_id`, the time bucket, then the other dimensions (the order of COPY's columns).
    var key: [String]
    var measures: [String]
    /// Whether the measures are `hll` sketches (merged by union) rather than numbers (merged by sum).
    var sketches: Bool
    /// Whether flushes append to a `_delta` table of its own (full hourly tables and sketches; derived cubes do not).
    var isAppended: Bool
    /// The derived cubes summed from this table's rows (a full hourly table's only).
    var derived: [AggregateTable] = []

    var merged: String { name + "_merged" }
    var delta: String { name + "_delta" }
    /// Whether the delta's dimension columns hold integers named in `values` (a full hourly table's).
    var isInterned: Bool { isAppended && !sketches }
    /// The texts of an interned delta's integers.
    var values: String { name + "_delta_values" }
    /// The key columns that hold dimension values (all but the time bucket).
    var dimensionColumns: [String] { key.filter { $0 != timeColumn } }
    /// The delta's columns: an interned delta's dimension columns are `<column>_ref`, integers naming values in
    /// `values` (named apart, so that SQL written for texts fails rather than reads integers as texts).
    var deltaColumns: [String] {
        guard isInterned else { return columns }
        let dimensions = Set(dimensionColumns)
        return columns.map { dimensions.contains($0) ? Self.reference($0) : $0 }
    }

    private static func reference(_ column: String) -> String { column + "_ref" }
    /// The tables that hold its rows.
    var stored: [String] { isAppended ? [delta, merged] : [merged] }
    /// The column of the key that holds the time bucket.
    var timeColumn: String { key[1] }
    var columns: [String] { key + measures }

    init(_ cube: Cube) {
        self.name = cube.table
        self.key = ["artist_id", cube.grain == .hour ? "hour" : "day"] + cube.dimensions.map(\.rawValue)
        self.measures = cube.dataset.metrics.map(\.rawValue)
        self.sketches = false
        self.isAppended = cube.isFull
        if cube.isFull {
            self.derived = Cube.derived.filter { $0.dataset == cube.dataset }.map(AggregateTable.init)
        }
    }

    private init(listeners name: String, key: [String]) {
        self.name = name
        self.key = key
        self.measures = ["listeners"]
        self.sketches = true
        self.isAppended = true
    }

    /// The rows of `rows` (an interned delta's `deltaColumns`) with their texts from `values` (`id`, `value`), as a
    /// query with this table's columns: what `<name>_delta_rows` is over the tables themselves.
    func textRows(of rows: String, values: String) -> String {
        let dimensions = Set(dimensionColumns)
        let selected = columns.map { dimensions.contains($0) ? "\($0).value AS \($0)" : "d.\($0)" }
        let joins = dimensionColumns.map { "JOIN \(values) \($0) ON \($0).id = d.\(Self.reference($0))" }
        return "SELECT \(selected.joined(separator: ", ")) FROM \(rows) d \(joins.joined(separator: " "))"
    }

    /// A derived cube's key columns as expressions over its full table's columns (`day` from `hour`, UTC).
    var keyFromFullRows: [String] {
        key.map { $0 == "day" ? "(hour AT TIME ZONE 'UTC')::date" : $0 }
    }

    static let artistListeners = AggregateTable(listeners: "artist_listeners_daily", key: ["artist_id", "day"])
    static let trackListeners = AggregateTable(listeners: "track_listeners_daily", key: ["artist_id", "day", "track_id"])

    /// The aggregates flushes append to: the full hourly tables (each with its derived cubes) and the listener
    /// sketches.
    static let appended: [AggregateTable] = Cube.all.filter(\.isFull).map(AggregateTable.init) + [artistListeners, trackListeners]

    /// Every stored aggregate: the appended ones and the derived cubes.
    static let all: [AggregateTable] = appended + appended.flatMap(\.derived)
}

extension Cube {
    /// For a full hourly table: the daily rows retention rolls its dropped months into (migration 0015).
    var rolledTable: String { dailyDetail.table + "_rolled" }
}
