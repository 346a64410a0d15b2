/// Several deltas read as one, as a flush writes its partitions' deltas: their values interned into one dictionary,
/// and what they add (rows by artist-day, listener sketches) made from each delta in place. Adding
/// them into one delta first (`InternedDelta.merge`) would copy every row into a table of its own only to read it once.
public struct CombinedDeltas: Sendable {
    public let deltas: [InternedDelta]
    /// Every value of the deltas: what the ids of `artistDayRows()` and `listeners()` are ids of.
    public let values: ValueDictionary
    /// Per delta, each of its ids' id in `values`.
    let ids: [[UInt32]]

    public init(_ deltas: [InternedDelta]) {
        self.deltas = deltas
        if deltas.count == 1 {
            values = deltas[0].values
            ids = [Array(0..<UInt32(deltas[0].values.count))]
        } else {
            var values = ValueDictionary()
            ids = deltas.map { values.intern($0.values) }
            self.values = values
        }
    }

    private init(deltas: [InternedDelta], values: ValueDictionary, ids: [[UInt32]]) {
        self.deltas = deltas
        self.values = values
        self.ids = ids
    }

    /// These deltas and `delta`, whose values alone are interned (the others' ids stay as they are).
    public func adding(_ delta: InternedDelta) -> CombinedDeltas {
        var values = self.values
        let added = values.intern(delta.values)
        return CombinedDeltas(deltas: deltas + [delta], values: values, ids: ids + [added])
    }

    /// The deltas' rows grouped by artist and day, a key added by two deltas summed into one row.
    public func artistDayRows() -> ArtistDayRows {
        ArtistDayRows(self)
    }

    /// The unique visitors per artist and day, and per page and day, of every delta's page events.
    public func visitors() -> InternedDelta.Listeners {
        InternedDelta.visitors(of: deltas, ids: ids)
    }

    /// The zones the deltas placed their events in.
    public var zones: ArtistZones { deltas.first?.zones ?? .allUTC }

    /// The page funnel's sessions the deltas' events are part of, each with what they add to it (a session in two
    /// deltas merged), in write order (`SessionKey.precedes`).
    public func sessions() -> [(key: SessionKey, state: FunnelSession)] {
        var merged: [SessionKey: FunnelSession] = [:]
        for delta in deltas {
            for (cell, state) in delta.sessions.rows {
                let key = SessionKey(
                    artistID: delta.values[cell.artist], portfolioID: delta.values[cell.portfolio], sessionID: delta.sessionIDs[cell.session])
                merged[key, default: state].formUnion(state)
            }
        }
        return merged.map { ($0.key, $0.value) }.sorted { $0.key.precedes($1.key) }
    }

    /// The unique listeners per artist and day, and per track and day, of every delta's plays.
    public func listeners() -> InternedDelta.Listeners {
        InternedDelta.listeners(of: deltas, ids: ids)
    }
}
