import BackbeatCore
import PostgresNIO

/// One artist-day's per-track listener sketches, as a flush stores them (`track_listeners_days`, migration 0018).
struct TrackListenersDay {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64
    var tracks: [String] = []
    var sketches: [HyperLogLog] = []

    var key: ArtistDayKey { ArtistDayKey(artistID: artistID, day: day) }

    /// `sketches` (ordered by artist, day, then track, as `InternedDelta.listeners` gives them) gathered per
    /// artist-day.
    static func days(of sketches: [(key: TrackDayCell, value: HyperLogLog)], values: ValueDictionary) -> [TrackListenersDay] {
        var days: [TrackListenersDay] = []
        var current: (artist: UInt32, day: Int64)?
        for (key, sketch) in sketches {
            if current?.artist != key.artist || current?.day != key.day {
                current = (key.artist, key.day)
                days.append(TrackListenersDay(artistID: values[key.artist], day: key.day))
            }
            days[days.count - 1].tracks.append(values[key.track])
            days[days.count - 1].sketches.append(sketch)
        }
        return days
    }
}

/// One artist-day's listener sketch, as a flush stores it (`artist_listeners_days`, migration 0018).
struct ArtistListenersDay {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64
    var sketch: HyperLogLog

    var key: ArtistDayKey { ArtistDayKey(artistID: artistID, day: day) }
}

extension Store {
    /// Writes a flush's sketches of `artists` and of `tracks` (the family's keys), one row per artist and day each,
    /// at a cost that follows what arrived (migration 0032): an artist-day its `_days` table holds none of gets its
    /// row there (`insertUnstored`), the others' rows are appended to the family's deltas, which compaction
    /// (`Store.compactDetail`) unions into them later. The month partitions of the `_days` tables are made first.
    func appendSketches(_ family: SketchFamily, artists: [ArtistListenersDay], tracks: [TrackListenersDay], on connection: PostgresConnection) async throws {
        guard let artistDeltas = family.artists.deltas, let keyedDeltas = family.keyed.deltas else { return }
        let sketchType = CopyBinaryEncoder.ArrayElement(oid: try await hllTypeOID(on: connection))
        if !artists.isEmpty {
            let columns = ["artist_id", "day", family.column]
            try await makeMonthPartitions(of: family.artists.days, days: artists.map(\.day), on: connection)
            let held = try await insertUnstored(artists, artistDay: \.key, into: family.artists.days, columns: columns, on: connection, Self.encodeArtist)
            if !held.isEmpty { try await append(held, to: artistDeltas, columns: columns, on: connection, Self.encodeArtist) }
        }
        if !tracks.isEmpty {
            let columns = ["artist_id", "day", family.key, family.column]
            let encode = { (day: TrackListenersDay, copy: inout CopyBinaryEncoder) in Self.encodeKeyed(day, sketchType, &copy) }
            try await makeMonthPartitions(of: family.keyed.days, days: tracks.map(\.day), on: connection)
            let held = try await insertUnstored(tracks, artistDay: \.key, into: family.keyed.days, columns: columns, on: connection, encode)
            if !held.isEmpty { try await append(held, to: keyedDeltas, columns: columns, on: connection, encode) }
        }
    }

    /// Unions the sketches of `artists` into `artistTable` and of `tracks` (the family's keys) into `trackTable`
    /// (their `_months`, where `day` is a month's first day), one row per artist and month (`writeListeners`).
    func mergeSketches(
        _ family: SketchFamily, artists: [ArtistListenersDay], into artistTable: String, tracks: [TrackListenersDay], into trackTable: String,
        on connection: PostgresConnection
    ) async throws {
        try await writeListeners(
            artists, artistDay: \.key, into: artistTable,
            stagedAs: "artist_id text, day date, \(family.column) bytea",
            columns: ["artist_id", "day", family.column], merging: Self.mergeArtistSketches(family, into: artistTable), on: connection
        ) { day, _, copy in
            Self.encodeArtist(day, &copy)
        }
        try await writeListeners(
            tracks, artistDay: \.key, into: trackTable,
            stagedAs: "artist_id text, day date, \(family.key) text[], \(family.column) bytea[]", columns: ["artist_id", "day", family.key, family.column],
            merging: Self.mergeKeyedSketches(family, into: trackTable), on: connection, Self.encodeKeyed)
    }

    private static func encodeArtist(_ day: ArtistListenersDay, _ copy: inout CopyBinaryEncoder) {
        copy.text(day.artistID)
        copy.day(day.day)
        copy.bytes(day.sketch.serialized())
        copy.endRow()
    }

    /// A keyed row, its sketches an array of `sketchType` (`hll` in a table, `bytea` in a staging table).
    private static func encodeKeyed(_ day: TrackListenersDay, _ sketchType: CopyBinaryEncoder.ArrayElement, _ copy: inout CopyBinaryEncoder) {
        copy.text(day.artistID)
        copy.day(day.day)
        copy.array(count: day.tracks.count, of: .text) { for track in day.tracks { $0.text(track) } }
        copy.array(count: day.sketches.count, of: sketchType) { for sketch in day.sketches { $0.bytes(sketch.serialized()) } }
        copy.endRow()
    }

    /// Writes one row per artist-day into `table` (a `_months` table): a row whose artist-day has none stored is COPYed in directly
    /// (`ArtistDayKey.inWriteOrder`; an hll's binary form is its bytes); the others (and all of them, when another
    /// writer stored one of their artist-days meanwhile) are COPYed to a temporary table (`stage`), sketches as bytea
    /// (binary COPY names an array's element type, and hll's OID is the database's own), and unioned in by `merge`.
    /// `encode` writes a row with the given element type for its sketch arrays.
    private func writeListeners<Row>(
        _ rows: [Row], artistDay: (Row) -> ArtistDayKey, into table: String, stagedAs definition: String, columns: [String],
        merging merge: (String) -> String, on connection: PostgresConnection,
        _ encode: (Row, CopyBinaryEncoder.ArrayElement, inout CopyBinaryEncoder) -> Void
    ) async throws {
        guard !rows.isEmpty else { return }
        let sketchType = CopyBinaryEncoder.ArrayElement(oid: try await hllTypeOID(on: connection))
        let toMerge = try await insertUnstored(rows, artistDay: artistDay, into: table, columns: columns, on: connection) { row, copy in
            encode(row, sketchType, &copy)
        }
        guard !toMerge.isEmpty else { return }
        try await stage(toMerge, into: table, as: definition, columns: columns, merging: merge, on: connection) { row, copy in
            encode(row, .bytea, &copy)
        }
    }

    /// The OID of the `hll` type in this database.
    func hllTypeOID(on connection: PostgresConnection) async throws -> UInt32 {
        let rows = try await connection.query("SELECT 'hll'::regtype::oid::bigint", logger: logger).collect()
        return UInt32(try rows[0].decode(Int64.self))
    }

    static func mergeArtistSketches(_ family: SketchFamily, into table: String) -> (String) -> String {
        let sketch = family.column
        return { stage in """
            INSERT INTO \(table) (artist_id, day, \(sketch))
            SELECT artist_id, day, \(sketch)::hll FROM \(stage) ORDER BY date_trunc('month', day), artist_id, day
            ON CONFLICT (artist_id, day) DO UPDATE SET \(sketch) = hll_union(\(table).\(sketch), excluded.\(sketch))
            """ }
    }

    static func mergeKeyedSketches(_ family: SketchFamily, into table: String) -> (String) -> String {
        let (key, sketch) = (family.key, family.column)
        return { stage in """
            INSERT INTO \(table) (artist_id, day, \(key), \(sketch))
            SELECT artist_id, day, \(key), \(sketch)::hll[] FROM \(stage) ORDER BY date_trunc('month', day), artist_id, day
            ON CONFLICT (artist_id, day) DO UPDATE SET (\(key), \(sketch)) = (
                SELECT array_agg(key), array_agg(sketch) FROM (
                    SELECT key, hll_union_agg(sketch) AS sketch FROM (
                        SELECT * FROM unnest(\(table).\(key), \(table).\(sketch))
                        UNION ALL
                        SELECT * FROM unnest(excluded.\(key), excluded.\(sketch))
                    ) AS stored(key, sketch)
                    GROUP BY key
                ) AS unioned)
            """ }
    }
}
