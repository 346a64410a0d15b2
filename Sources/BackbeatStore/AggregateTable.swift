import BackbeatCore

/// A stored aggregate as PostgreSQL holds it: `days`, one row per artist and UTC day holding the aggregate's rows of
/// that day, into which each flush merges its own rows, so that it is final when the flush commits; and a view,
/// `<name>`, with one row per key, for SQL of its own (Grafana):
/// - a cube (`Cube.all`: the full-dimension hourly tables and the dashboard cubes) in `<name>_days`, its rows in one
///   block (migration 0019, `CubeBlock`, `Store.mergeDays`), which Backbeat reads and sums itself (`Store.rows`);
/// - the listener sketches (migration 0018, `Store.mergeListeners`): an artist's of a day in `artist_listeners_days`,
///   its tracks' in `track_listeners_days` (the day's track ids and sketches in two arrays), read through the views.
struct AggregateTable: Sendable {
    /// The view's name.
    var name: String
    /// The table of its rows by artist and day.
    var days: String

    init(_ cube: Cube) {
        self.name = cube.table
        self.days = cube.table + "_days"
    }

    private init(listeners name: String, days: String) {
        self.name = name
        self.days = days
    }

    static let artistListeners = AggregateTable(listeners: "artist_listeners_daily", days: "artist_listeners_days")
    static let trackListeners = AggregateTable(listeners: "track_listeners_daily", days: "track_listeners_days")

    /// Every stored aggregate: the cubes and the listener sketches.
    static let all: [AggregateTable] = Cube.all.map(AggregateTable.init) + [artistListeners, trackListeners]
}

extension Cube {
    /// For a full hourly table: the daily rows retention rolls its dropped months into (migration 0015).
    var rolledTable: String { dailyDetail.table + "_rolled" }
}
