import BackbeatCore

/// A stored aggregate as PostgreSQL holds it: `days`, one row per artist and UTC day holding the aggregate's rows of
/// that day, into which each flush merges its own rows, so that it is final when the flush commits; and a view,
/// `<name>`, with one row per key, for SQL of its own (Grafana):
/// - a cube (`Cube.all`: the full-dimension hourly tables and the dashboard cubes) in `<name>_days`, its rows in one
///   block (migration 0019, `CubeBlock`, `Store.mergeDays`), which Backbeat reads and sums itself (`Store.rows`);
/// - the listener sketches (migration 0018, `Store.appendSketches`): an artist's of a day in `artist_listeners_days`,
///   its tracks' in `track_listeners_days` (the day's track ids and sketches in two arrays), read through the views.
///
/// The full-dimension tables and the sketches keep a flush's rows apart as `deltas` until compaction merges them
/// (migration 0032).
///
/// The dashboard cubes and the listener sketches also have `months` (migration 0020, `Store.rollMonths`): the same
/// rows by artist and month, keyed by the month's first day in `day`.
struct AggregateTable: Sendable {
    /// The view's name.
    var name: String
    /// The table of its rows by artist and day.
    var days: String
    /// The table of its rows by artist and month (nil: the full-dimension hourly tables have none).
    var months: String?
    /// The blocks or sketches flushes appended since compaction last merged them into `days` (migration 0032,
    /// `Store.compactDetail`), any number an artist-day: a full-dimension table's and a sketch's. Nil for the
    /// dashboard cubes, merged at each flush (their blocks are small).
    var deltas: String?
    /// Where an artist-day's rows are read from: `days`, or with `deltas` the view of both (`<cube>_blocks`,
    /// `<table>_sketches`), whose rows of a key a reader sums or unions.
    var stored: String

    init(_ cube: Cube) {
        self.name = cube.table
        self.days = cube.table + "_days"
        self.months = cube.isFull ? nil : cube.table + "_months"
        self.deltas = cube.isFull ? cube.table + "_deltas" : nil
        self.stored = cube.isFull ? cube.table + "_blocks" : days
    }

    /// A sketch's tables, named `<base>_days`, `<base>_months`, `<base>_deltas` and `<base>_sketches`.
    private init(listeners name: String, base: String) {
        self.name = name
        self.days = base + "_days"
        self.months = base + "_months"
        self.deltas = base + "_deltas"
        self.stored = base + "_sketches"
    }

    static let artistListeners = AggregateTable(listeners: "artist_listeners_daily", base: "artist_listeners")
    static let trackListeners = AggregateTable(listeners: "track_listeners_daily", base: "track_listeners")

    static let artistVisitors = AggregateTable(listeners: "artist_visitors_daily", base: "artist_visitors")
    static let pageVisitors = AggregateTable(listeners: "page_visitors_daily", base: "page_visitors")

    /// Every stored aggregate: the cubes and the sketches.
    static let all: [AggregateTable] = Cube.all.map(AggregateTable.init) + SketchFamily.all.flatMap { [$0.artists, $0.keyed] }
}

/// One kind of distinct count kept as sketches (HyperLogLog), per artist-day and per keyed day (migrations 0018,
/// 0020, 0028): the unique listeners of plays (per track) and the unique visitors of page events (per page).
struct SketchFamily: Sendable {
    /// An artist's sketch per day (a row of `column`).
    var artists: AggregateTable
    /// An artist's sketches per key and day: the day's keys in `key`, their sketches in `column`, two arrays.
    var keyed: AggregateTable
    var column: String
    var key: String
    /// What the family's sketches count, as the core names it.
    var kind: ListenerScope.Kind

    private init(artists: AggregateTable, keyed: AggregateTable, column: String, key: String, kind: ListenerScope.Kind) {
        (self.artists, self.keyed, self.column, self.key, self.kind) = (artists, keyed, column, key, kind)
    }

    static let listeners = SketchFamily(artists: .artistListeners, keyed: .trackListeners, column: "listeners", key: "track_id", kind: .listeners)
    static let visitors = SketchFamily(artists: .artistVisitors, keyed: .pageVisitors, column: "visitors", key: "portfolio_id", kind: .visitors)
    static let all = [listeners, visitors]

    /// The family of sketches of `kind`.
    init(_ kind: ListenerScope.Kind) {
        self = kind == .listeners ? .listeners : .visitors
    }
}

extension Cube {
    /// For a full hourly table: the daily rows retention rolls its dropped months into (migration 0015).
    var rolledTable: String { dailyDetail.table + "_rolled" }
}
