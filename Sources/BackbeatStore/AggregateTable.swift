import BackbeatCore

/// A stored aggregate as PostgreSQL holds it: `days`, one row per artist and UTC day holding the aggregate's rows of
/// that day, into which each flush merges its own rows, so that it is final when the flush commits; and a view,
/// `<name>`, with one row per key, for SQL of its own (Grafana):
/// - a cube (`Cube.all`: the full-dimension hourly tables and the dashboard cubes) in `<name>_days`, its rows in one
///   block (migration 0019, `CubeBlock`, `Store.mergeDays`), which Backbeat reads and sums itself (`Store.rows`);
/// - the listener sketches (migration 0018, `Store.mergeListeners`): an artist's of a day in `artist_listeners_days`,
///   its tracks' in `track_listeners_days` (the day's track ids and sketches in two arrays), read through the views.
///
/// The full-dimension tables keep a flush's blocks apart as `deltas` until compaction merges them (migration 0032).
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
    /// A full-dimension table's deltas (migration 0032): the blocks flushes appended since compaction last merged
    /// them into `days` (`Store.compactDetail`), any number an artist-day. Nil for the others, merged at each flush.
    var deltas: String?
    /// Where an artist-day's blocks are read from: `days`, or for a full-dimension table the view `<name>_blocks`
    /// of its `days` and its `deltas`, whose rows a reader sums.
    var blocks: String

    init(_ cube: Cube) {
        self.name = cube.table
        self.days = cube.table + "_days"
        self.months = cube.isFull ? nil : cube.table + "_months"
        self.deltas = cube.isFull ? cube.table + "_deltas" : nil
        self.blocks = cube.isFull ? cube.table + "_blocks" : days
    }

    private init(listeners name: String, days: String, months: String) {
        self.name = name
        self.days = days
        self.months = months
        self.blocks = days
    }

    static let artistListeners = AggregateTable(listeners: "artist_listeners_daily", days: "artist_listeners_days", months: "artist_listeners_months")
    static let trackListeners = AggregateTable(listeners: "track_listeners_daily", days: "track_listeners_days", months: "track_listeners_months")

    static let artistVisitors = AggregateTable(listeners: "artist_visitors_daily", days: "artist_visitors_days", months: "artist_visitors_months")
    static let pageVisitors = AggregateTable(listeners: "page_visitors_daily", days: "page_visitors_days", months: "page_visitors_months")

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
