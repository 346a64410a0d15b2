import BackbeatCore

/// A stored aggregate as PostgreSQL holds it. Every aggregate has a view, `<name>`, which every reader uses and sums
/// (sum, hll_union_agg); what is behind it depends on the kind:
/// - a cube (`Cube.all`: the full-dimension hourly tables and the dashboard cubes) has `<name>_days`, one row per
///   artist and UTC day with the cube's rows in arrays, one per column (migration 0017): each flush merges its rows
///   into it (`Store.mergeDays`), so it is final when the flush commits; the view unnests the arrays;
/// - a listener sketch table has `<name>_merged`, one row per key, and `<name>_delta`, which takes the sketches of
///   each flush as they come (COPY only, no key, no index); the view is both tables together, and `Store.compact()`
///   moves delta rows into the merged table (migration 0008).
struct AggregateTable: Sendable {
    /// The view's name.
    var name: String
    /// The key columns: `artist_id`, the time bucket, then the other dimensions (the order of COPY's columns).
    var key: [String]
    var measures: [String]
    /// Whether the measures are `hll` sketches (appended and merged by union) rather than numbers (a cube's, stored
    /// by artist-day).
    var sketches: Bool

    /// A sketch table's rows, one per key.
    var merged: String { name + "_merged" }
    /// A sketch table's rows as flushes appended them.
    var delta: String { name + "_delta" }
    /// A cube's rows by artist and day.
    var days: String { name + "_days" }
    /// The tables that hold its rows.
    var stored: [String] { sketches ? [delta, merged] : [days] }
    /// The column of the key that holds the time bucket.
    var timeColumn: String { key[1] }
    /// The time column of the tables in `stored` (`day` for a cube, whatever its grain).
    var storedTimeColumn: String { sketches ? timeColumn : "day" }
    /// The key columns that hold dimension values (all but the time bucket).
    var dimensionColumns: [String] { key.filter { $0 != timeColumn } }
    var columns: [String] { key + measures }

    init(_ cube: Cube) {
        self.name = cube.table
        self.key = ["artist_id", cube.grain == .hour ? "hour" : "day"] + cube.dimensions.map(\.rawValue)
        self.measures = cube.dataset.metrics.map(\.rawValue)
        self.sketches = false
    }

    private init(listeners name: String, key: [String]) {
        self.name = name
        self.key = key
        self.measures = ["listeners"]
        self.sketches = true
    }

    static let artistListeners = AggregateTable(listeners: "artist_listeners_daily", key: ["artist_id", "day"])
    static let trackListeners = AggregateTable(listeners: "track_listeners_daily", key: ["artist_id", "day", "track_id"])

    /// The aggregates flushes append to and compaction merges: the listener sketches.
    static let appended: [AggregateTable] = [artistListeners, trackListeners]

    /// Every stored aggregate: the cubes and the listener sketches.
    static let all: [AggregateTable] = Cube.all.map(AggregateTable.init) + appended
}

extension Cube {
    /// For a full hourly table: the daily rows retention rolls its dropped months into (migration 0015).
    var rolledTable: String { dailyDetail.table + "_rolled" }
}
