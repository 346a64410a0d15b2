import BackbeatCore
import PostgresNIO

/// One artist-day's per-track listener sketches, as a flush stores them (`track_listeners_days`, migration 0018).
struct TrackListenersDay {
    var artistID: String
    /// Days since the epoch (UTC).
    var day: Int64
    var tracks: [String] = []
    var sketches: [HyperLogLog] = []

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

extension Store {
    /// Unions a flush's listener sketches into `artist_listeners_days` and `track_listeners_days` (migration 0018),
    /// one row per artist and day: the sketches are COPYed to a temporary table (`stage`), then inserted in the order
    /// of the artist-days; a stored artist-day gets its sketch, or each track's, unioned with the flush's
    /// (`hll_union`), in the same statement.
    func mergeListeners(_ listeners: InternedDelta.Listeners, values: ValueDictionary, on connection: PostgresConnection) async throws {
        guard !listeners.artists.isEmpty else { return }
        // Staged as bytea (binary COPY names an array's element type, and hll's has no fixed OID), cast on insert.
        let artists = AggregateTable.artistListeners
        try await stage(
            listeners.artists, days: listeners.artists.map(\.key.day), for: artists, as: "artist_id text, day date, listeners bytea",
            columns: ["artist_id", "day", "listeners"], merging: Self.mergeArtistListeners(into: artists), on: connection
        ) { sketch, copy in
            copy.text(values[sketch.key.artist])
            copy.day(sketch.key.day)
            copy.bytes(sketch.value.serialized())
            copy.endRow()
        }
        let tracks = AggregateTable.trackListeners
        let days = TrackListenersDay.days(of: listeners.tracks, values: values)
        try await stage(
            days, days: days.map(\.day), for: tracks, as: "artist_id text, day date, track_id text[], listeners bytea[]",
            columns: ["artist_id", "day", "track_id", "listeners"], merging: Self.mergeTrackListeners(into: tracks), on: connection
        ) { day, copy in
            copy.text(day.artistID)
            copy.day(day.day)
            copy.array(count: day.tracks.count, of: .text) { for track in day.tracks { $0.text(track) } }
            copy.array(count: day.sketches.count, of: .bytea) { for sketch in day.sketches { $0.bytes(sketch.serialized()) } }
            copy.endRow()
        }
    }

    private static func mergeArtistListeners(into table: AggregateTable) -> (String) -> String {
        { stage in """
            INSERT INTO \(table.days) (artist_id, day, listeners)
            SELECT artist_id, day, listeners::hll FROM \(stage) ORDER BY artist_id, day
            ON CONFLICT (artist_id, day) DO UPDATE SET listeners = hll_union(\(table.days).listeners, excluded.listeners)
            """ }
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
