import BackbeatCore
import PostgresNIO

/// One artist-day's per-track listener sketches, as a flush stores them (`track_listeners_days`, migration 0018).
struct TrackListenersDay {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64
    var tracks: [String] = []
    var sketches: [HyperLogLog] = []

    /// `sketches` (ordered by artist, day, then track, as `InternedDelta.trackListeners` gives them) gathered per
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

    /// `sketches` (an in-memory layer's) gathered per artist-day.
    static func days(of sketches: [TrackDay: HyperLogLog]) -> [TrackListenersDay] {
        var days: [ArtistDay: TrackListenersDay] = [:]
        for (key, sketch) in sketches {
            let artistDay = ArtistDay(artistID: key.artistID, day: key.day)
            days[artistDay, default: TrackListenersDay(artistID: key.artistID, day: key.day)].tracks.append(key.trackID)
            days[artistDay]!.sketches.append(sketch)
        }
        return Array(days.values)
    }
}

extension Store {
    /// Unions a flush's per-track listener sketches into `track_listeners_days` (migration 0018), one row per artist
    /// and day: the sketches are COPYed to a temporary table (`stage`), then inserted in the order of the
    /// artist-days; an artist-day already stored gets each track's stored sketch and the flush's unioned
    /// (`hll_union_agg`), in the same statement.
    func mergeTrackListeners(_ days: [TrackListenersDay], on connection: PostgresConnection) async throws {
        guard !days.isEmpty else { return }
        let table = AggregateTable.trackListeners
        try await makeMonthPartitions(of: table.days, days: days.map(\.day), on: connection)
        // Staged as bytea (binary COPY names an array's element type, and hll's has no fixed OID), cast on insert.
        try await stage(
            days, for: table, as: "artist_id text, day date, track_id text[], listeners bytea[]",
            columns: ["artist_id", "day", "track_id", "listeners"], merging: Self.mergeTrackListeners(into: table), on: connection
        ) { day, copy in
            copy.text(day.artistID)
            copy.day(day.day)
            copy.array(count: day.tracks.count, of: .text) { for track in day.tracks { $0.text(track) } }
            copy.array(count: day.sketches.count, of: .bytea) { for sketch in day.sketches { $0.bytes(sketch.serialized()) } }
            copy.endRow()
        }
    }

    private static func mergeTrackListeners(into table: AggregateTable) -> (String) -> String {
        { stage in """
            INSERT INTO \(table.days) (artist_id, day, track_id, listeners)
            SELECT artist_id, day, track_id, listeners::hll[] FROM \(stage) ORDER BY artist_id, day
            ON CONFLICT (artist_id, day) DO UPDATE SET (track_id, listeners) = (
                SELECT array_agg(track_id), array_agg(listeners) FROM (
                    SELECT track_id, hll_union_agg(listeners) AS listeners FROM (
                        SELECT * FROM unnest(\(table.days).track_id, \(table.days).listeners)
                        UNION ALL
                        SELECT * FROM unnest(excluded.track_id, excluded.listeners)
                    ) AS stored(track_id, listeners)
                    GROUP BY track_id
                ) AS unioned)
            """ }
    }
}
