import BackbeatCore

/// A stored aggregate as PostgreSQL holds it (migration 0008): `<name>_merged` keeps one row per key, `<name>_delta`
/// takes the rows of each flush as they come (COPY only, no key, no index), and the view `<name>`, which every
/// reader uses, is both together. Readers sum, so a key's rows in either table add up to its value;
/// `Store.compact()` moves delta rows into the merged table.
struct AggregateTable: Sendable {
    /// The view's name; the tables are `merged` and `delta`.
    var name: String
    /// The key columns: `artist_id`, the time bucket, then the other dimensions (the order of COPY's columns).
    var key: [String]
    var measures: [String]
    /// Whether the measures are `hll` sketches (merged by union) rather than numbers (merged by sum).
    var sketches: Bool

    var merged: String { name + "_merged" }
    var delta: String { name + "_delta" }
    /// The column of the key that holds the time bucket.
    var timeColumn: String { key[1] }
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

    /// Every stored aggregate: the cubes (full hourly tables included) and the listener sketches.
    static let all: [AggregateTable] = Cube.all.map(AggregateTable.init) + [artistListeners, trackListeners]
}
