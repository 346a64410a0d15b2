import BackbeatCore
import PostgresNIO

extension Store {
    /// Merges the page funnel's sessions `deltas` touched into their stored states (`page_funnel_sessions`,
    /// migration 0029) and answers what that changes in the funnel: a delta of the `funnel` dataset alone, each
    /// changed session's new counts less its old ones on the local quarter hour of its first view
    /// (`FunnelSession.changes`); nil when no session changed what it counts.
    ///
    /// Stored states are locked and new ones inserted in one order by every writer (`SessionKey.precedes`), as the
    /// cubes' artist-days are (`mergeBlocks`): a state another writer inserts meanwhile makes the insert fail once
    /// that writer commits; it is undone to its savepoint, and those sessions are merged with what was stored.
    func mergeSessions(_ deltas: CombinedDeltas, on connection: PostgresConnection) async throws -> InternedDelta? {
        var remaining = deltas.sessions()
        guard !remaining.isEmpty else { return nil }
        var funnel = InternedDelta(zones: deltas.zones)
        func count(_ key: SessionKey, from old: FunnelSession?, to new: FunnelSession) {
            for change in FunnelSession.changes(from: old, to: new) {
                funnel.addFunnel(artistID: key.artistID, portfolioID: key.portfolioID, at: change.at, change.counts)
            }
        }
        while !remaining.isEmpty {
            let stored = try await lockedSessions(remaining.map(\.key), on: connection)
            var updated: [(key: SessionKey, state: FunnelSession)] = []
            var new: [(key: SessionKey, state: FunnelSession)] = []
            for (key, state) in remaining {
                guard let old = stored[key] else {
                    new.append((key, state))
                    continue
                }
                var merged = old
                merged.formUnion(state)
                guard merged != old else { continue }
                updated.append((key, merged))
                count(key, from: old, to: merged)
            }
            if !updated.isEmpty {
                try await stage(updated, into: "page_funnel_sessions", as: Self.sessionColumnTypes, columns: Self.sessionColumns, merging: { stage in
                    """
                    UPDATE page_funnel_sessions s SET started_at = t.started_at, first_view = t.first_view,
                        first_section = t.first_section, first_click = t.first_click
                    FROM \(stage) t
                    WHERE s.artist_id = t.artist_id AND s.portfolio_id = t.portfolio_id AND s.session_id = t.session_id
                    """
                }, on: connection, Self.encode)
            }
            if new.isEmpty { break }
            if try await appendUnlessStored(new, to: "page_funnel_sessions", columns: Self.sessionColumns, on: connection, Self.encode) {
                for (key, state) in new { count(key, from: nil, to: state) }
                break
            }
            remaining = new
        }
        return funnel.isEmpty ? nil : funnel
    }

    /// The stored states of `keys` (in write order), locked for update in that order.
    private func lockedSessions(_ keys: [SessionKey], on connection: PostgresConnection) async throws -> [SessionKey: FunnelSession] {
        let rows = try await connection.query("""
            SELECT \(unescaped: Self.sessionState)
            FROM page_funnel_sessions s
            JOIN unnest(\(keys.map(\.artistID))::text[], \(keys.map(\.portfolioID))::text[], \(keys.map(\.sessionID))::text[])
                AS k(artist_id, portfolio_id, session_id)
              ON s.artist_id = k.artist_id AND s.portfolio_id = k.portfolio_id AND s.session_id = k.session_id
            ORDER BY s.artist_id COLLATE "C", s.portfolio_id COLLATE "C", s.session_id COLLATE "C"
            FOR UPDATE OF s
            """, logger: logger)
        var stored: [SessionKey: FunnelSession] = [:]
        for (key, state) in try await Self.sessionStates(rows) { stored[key] = state }
        return stored
    }

    /// The columns of a stored session's key and state (of `page_funnel_sessions s`), as `sessionStates` reads them.
    private static let sessionState = """
        s.artist_id, s.portfolio_id, s.session_id, extract(epoch FROM s.started_at)::bigint,
        extract(epoch FROM s.first_view)::bigint, extract(epoch FROM s.first_section)::bigint,
        extract(epoch FROM s.first_click)::bigint
        """

    /// The sessions of `rows` (selected as `sessionState`), each with its state.
    private static func sessionStates(_ rows: PostgresRowSequence) async throws -> [(key: SessionKey, state: FunnelSession)] {
        var states: [(key: SessionKey, state: FunnelSession)] = []
        for try await (artist, portfolio, session, start, view, section, click) in rows.decode((String, String, String, Int64, Int64?, Int64?, Int64?).self) {
            states.append((SessionKey(artistID: artist, portfolioID: portfolio, sessionID: session),
                           FunnelSession(start: start, firstView: view, firstSection: section, firstClick: click)))
        }
        return states
    }

    private static let sessionColumns = ["artist_id", "portfolio_id", "session_id", "started_at", "first_view", "first_section", "first_click"]
    private static let sessionColumnTypes = """
        artist_id text, portfolio_id text, session_id text, started_at timestamptz, first_view timestamptz,
        first_section timestamptz, first_click timestamptz
        """

    private static func encode(_ row: (key: SessionKey, state: FunnelSession), _ copy: inout CopyBinaryEncoder) {
        copy.text(row.key.artistID)
        copy.text(row.key.portfolioID)
        copy.text(row.key.sessionID)
        copy.instant(seconds: row.state.start)
        copy.instant(seconds: row.state.firstView)
        copy.instant(seconds: row.state.firstSection)
        copy.instant(seconds: row.state.firstClick)
        copy.endRow()
    }
}

extension Store {
    /// Drops the stored states of the sessions whose funnel rows a rebuild of `scope` replaces, so that they are
    /// counted again from the events it counts: an artist's every session (its rebuild counts all of the artist's
    /// events), or those whose first view falls on one of `days` (local days, in `zones`). Answers the part of each of
    /// the latter that its events outside those days made (`FunnelSession.excluding`), for the rebuild to merge with
    /// what it counts: a session open across the first or last day counts as all of its events make it.
    func dropSessions(
        countedIn scope: RebuildScope, days: ClosedRange<Int64>, zones: ArtistZones, on connection: PostgresConnection
    ) async throws -> [(key: SessionKey, state: FunnelSession)] {
        switch scope {
        case .artist(let artist, _):
            try await connection.query("DELETE FROM page_funnel_sessions WHERE artist_id = \(artist)", logger: logger)
            return []
        case .days:
            // Local days lie within a day of UTC's: the candidates are read by UTC instant, then placed in their
            // artist's zone.
            let from = Self.storable(days.lowerBound - 1) * 86_400, to = Self.storable(days.upperBound + 2) * 86_400
            let rows = try await connection.query("""
                SELECT \(unescaped: Self.sessionState) FROM page_funnel_sessions s
                WHERE s.first_view >= to_timestamp(\(from)) AND s.first_view < to_timestamp(\(to))
                """, logger: logger)
            var dropped: [SessionKey] = []
            var kept: [(key: SessionKey, state: FunnelSession)] = []
            for (key, state) in try await Self.sessionStates(rows) {
                var clock = LocalClock(zones[key.artistID])
                func isCounted(_ instant: Int64) -> Bool { days.contains(clock.localSeconds(atSecond: instant).floorDiv(86_400)) }
                guard let view = state.firstView, isCounted(view) else { continue }
                dropped.append(key)
                if let outside = state.excluding(isCounted) { kept.append((key, outside)) }
            }
            guard !dropped.isEmpty else { return [] }
            try await connection.query("""
                DELETE FROM page_funnel_sessions s
                USING unnest(\(dropped.map(\.artistID))::text[], \(dropped.map(\.portfolioID))::text[], \(dropped.map(\.sessionID))::text[])
                    AS k(artist_id, portfolio_id, session_id)
                WHERE s.artist_id = k.artist_id AND s.portfolio_id = k.portfolio_id AND s.session_id = k.session_id
                """, logger: logger)
            return kept
        }
    }
}
