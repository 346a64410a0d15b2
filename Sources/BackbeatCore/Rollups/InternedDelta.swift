/// Additions to the full-dimension rollups (by quarter hour), with every string dimension interned into an id of
/// one `ValueDictionary`: an event is added straight from the bytes it was decoded from (`EventRecord`), and a key
/// is a few integers to hash and compare, with no String made, hashed or reference-counted per event.
public struct InternedDelta: Sendable {
    public private(set) var values = ValueDictionary()
    public private(set) var streams = CellTable<StreamCell, StreamCounters>()
    public private(set) var revenue = CellTable<RevenueCell, RevenueCounters>()
    public private(set) var social = CellTable<SocialCell, Int64>()
    /// Page events, counted.
    public private(set) var page = CellTable<PageCell, Int64>()
    /// The page funnel's sessions these page events are part of (those with a `session_id`), each with what they
    /// add to it: the stored state of each is merged with this one when the delta is flushed (`FunnelSession`).
    public private(set) var sessions = CellTable<SessionCell, FunnelSession>()
    /// The session ids of `sessions` (`SessionCell.session`), apart from `values`: the cubes never hold them, and
    /// whatever adds `values` to memory's symbols would keep every session id ever seen.
    public private(set) var sessionIDs = ValueDictionary()
    /// Changes of the page funnel's counts (`addFunnel`): made when sessions are merged with their stored states, not
    /// when events are added.
    public private(set) var funnel = CellTable<FunnelCell, FunnelCounts>()
    /// The listener of each play with a `listener_id`, by track and day: the unique-listener sketches are built
    /// from these when they are read (`listeners`), one sort instead of a sketch update per play.
    private var plays: [ListenedPlay] = []
    /// The visitor of each page event, by page (`portfolio_id`, in the place of a play's track) and day: the
    /// unique-visitor sketches are built from these as the listeners' are.
    private var visits: [ListenedPlay] = []
    /// The visitor of each `portfolio_view` by its sources (`PageSourceKey`: referrer and country, of the page and of
    /// all pages) and day: counted in those keys' sketches only, as the artist's own sketch has the visitor from the
    /// view's page visit already.
    private var sourceVisits: [ListenedPlay] = []
    /// The ids of the page source keys met so far, by page (`UInt32.max`: all pages), kind and value.
    private var sourceKeys: [SourceKeyCell: UInt32] = [:]
    public var rejected: [RejectedMessage] = []
    /// The zones whose local time events are placed in (`ArtistZones`).
    public let zones: ArtistZones
    /// The local clock of each artist id met so far (nil: not met yet; an artist in UTC has UTC's, whose one stretch
    /// holds every instant); unused when every artist is in UTC.
    private var clocks: [LocalClock?] = []
    /// The ids of "" and of the page events' type names, interned at the first page event: the same for the delta's
    /// life, so not looked up per event.
    private var pageIDs: PageIDs?

    private struct SourceKeyCell: Hashable {
        var portfolio: UInt32
        var kind: PageSourceKey.Kind
        var value: UInt32
    }

    private struct PageIDs {
        let empty: UInt32
        let portfolioView: UInt32
        let sectionView: UInt32
        let blockInteraction: UInt32
        let ctaClick: UInt32

        init(_ values: inout ValueDictionary) {
            empty = values.id(UnsafeRawBufferPointer(start: nil, count: 0))
            portfolioView = values.id(EventTypeName.portfolioView.rawValue)
            sectionView = values.id(EventTypeName.sectionView.rawValue)
            blockInteraction = values.id(EventTypeName.blockInteraction.rawValue)
            ctaClick = values.id(EventTypeName.ctaClick.rawValue)
        }
    }

    public init(zones: ArtistZones = .allUTC) {
        self.zones = zones
    }

    /// An empty delta sized like `other`, with its zones: for the next batch of a stream of similar batches (a
    /// replay), whose tables then do not grow step by step from empty.
    public init(sizedLike other: InternedDelta) {
        zones = other.zones
        streams = CellTable(capacity: other.streams.count)
        revenue = CellTable(capacity: other.revenue.count)
        social = CellTable(capacity: other.social.count)
        page = CellTable(capacity: other.page.count)
        sessions = CellTable(capacity: other.sessions.count)
        plays.reserveCapacity(other.plays.count)
        visits.reserveCapacity(other.visits.count)
        sourceVisits.reserveCapacity(other.sourceVisits.count)
    }

    public var isEmpty: Bool {
        streams.isEmpty && revenue.isEmpty && social.isEmpty && page.isEmpty && sessions.isEmpty && funnel.isEmpty && rejected.isEmpty && plays.isEmpty && visits.isEmpty
            && sourceVisits.isEmpty
    }

    /// Rows of the full-dimension tables: one per cell.
    public var rowCount: Int { streams.count + revenue.count + social.count + page.count + funnel.count }

    /// Hashes kept for the listener and visitor sketches: plays, visits and source visits.
    public var keptHashCount: Int { plays.count + visits.count + sourceVisits.count }

    /// Each play with a listener, in the order added: the track day it counts in and the listener's hash.
    public func forEachPlay(_ body: (TrackDayCell, Int64) -> Void) {
        for play in plays { body(play.cell, play.hash) }
    }

    /// Each page event, in the order added: its page's day (`TrackDayCell.track` holds the page) and the visitor's
    /// hash.
    public func forEachVisit(_ body: (TrackDayCell, Int64) -> Void) {
        for visit in visits { body(visit.cell, visit.hash) }
    }

    /// Each `portfolio_view`'s visitor by each of its sources, in the order added: the source's day
    /// (`TrackDayCell.track` holds the source's key, `PageSourceKey`) and the visitor's hash. These count in the keys'
    /// sketches only: the view's page visit (`forEachVisit`) counts the visitor for the artist.
    public func forEachSourceVisit(_ body: (TrackDayCell, Int64) -> Void) {
        for visit in sourceVisits { body(visit.cell, visit.hash) }
    }

    /// Adds one valid event, decoded from `value` (`EventDecoder.decodeRecord`), on its artist's local quarter hour and
    /// day.
    /// With `days`, only an event whose local day is one of them is added; answers whether the event was added.
    @discardableResult
    public mutating func add(_ record: EventRecord, in value: UnsafeRawBufferPointer, onDaysIn days: ClosedRange<Int64>? = nil) -> Bool {
        let artist = id(record.artist, record, value)
        let local = zones.isEmpty ? record.occurredAt.seconds : localSeconds(record.occurredAt.seconds, artist: artist)
        let day = local.floorDiv(86_400)
        if let days, !days.contains(day) { return false }
        let quarter = local.floorDiv(900)
        switch record.details {
        case .stream(let stream):
            let track = id(stream.track, record, value)
            let cell = StreamCell(
                artist: artist, track: track, platform: id(stream.platform, record, value), country: id(stream.country, record, value),
                quarter: quarter, ageRange: stream.ageRange, gender: stream.gender)
            let added = StreamCounters(playOf: stream.durationMs)
            streams.update(cell, initial: StreamCounters()) { $0 += added }
            if let hash = stream.listenerHash {
                plays.append(ListenedPlay(cell: TrackDayCell(artist: artist, track: track, day: day), hash: hash))
            }
        case .revenue(let revenue):
            let cell = RevenueCell(
                artist: artist, quarter: quarter, source: revenue.source, currency: id(revenue.currency, record, value),
                platform: id(revenue.platform, record, value), track: id(revenue.track, record, value))
            self.revenue.update(cell, initial: RevenueCounters()) { $0 += RevenueCounters(amount: revenue.amount, events: 1) }
        case .social(let social):
            let cell = SocialCell(artist: artist, quarter: quarter, platform: id(social.platform, record, value), action: id(social.action, record, value))
            self.social.update(cell, initial: 0) { $0 += social.count }
        case .page(let page):
            let ids: PageIDs
            if let known = pageIDs { ids = known } else { ids = PageIDs(&values); pageIDs = ids }
            let empty = ids.empty
            var cell = PageCell(
                artist: artist, quarter: quarter, portfolio: id(page.portfolio, record, value), type: empty, section: empty, block: empty,
                blockType: empty, action: empty, actionType: empty, referrer: id(page.referrer, record, value),
                country: id(page.country, record, value))
            switch page.kind {
            case .portfolioView:
                cell.type = ids.portfolioView
                addSourceVisits(artist: artist, portfolio: cell.portfolio, referrer: cell.referrer, country: cell.country, day: day, page.visitorHash)
            case .sectionView(let section):
                cell.type = ids.sectionView
                cell.section = id(section, record, value)
            case .blockInteraction(let block, let blockType, let action):
                cell.type = ids.blockInteraction
                (cell.block, cell.blockType, cell.action) = (id(block, record, value), id(blockType, record, value), id(action, record, value))
            case .ctaClick(let actionType):
                cell.type = ids.ctaClick
                cell.actionType = id(actionType, record, value)
            }
            self.page.update(cell, initial: 0) { $0 += 1 }
            if let session = page.session {
                let step = FunnelSession(page.kind.funnelStep, at: record.occurredAt.seconds)
                let sessionID = record.withBytes(of: session, in: value) { sessionIDs.id($0) }
                sessions.update(SessionCell(artist: artist, portfolio: cell.portfolio, session: sessionID), initial: step) {
                    $0.formUnion(step)
                }
            }
            visits.append(ListenedPlay(cell: TrackDayCell(artist: artist, track: cell.portfolio, day: day), hash: page.visitorHash))
        }
        return true
    }

    /// Adds one stored row of a full-dimension cube (`cube`, whose `values` are in its dimension order, as a block
    /// holds them) of `artistID` on local quarter hour `quarter`: a row moved to another zone (`ZoneRecount`).
    public mutating func add(_ values: [String], of cube: Cube, artistID: String, quarter: Int64, sums: CubeRowSums) {
        precondition(cube.isFull && values.count == cube.dimensions.count, "a full-dimension row")
        var text: [Dimension: String] = [:]
        for (dimension, value) in zip(cube.dimensions, values) { text[dimension] = value }
        let artist = self.values.id(artistID)
        func id(_ dimension: Dimension) -> UInt32 { self.values.id(text[dimension] ?? "") }
        switch cube.dataset {
        case .streams:
            let cell = StreamCell(
                artist: artist, track: id(.trackID), platform: id(.platform), country: id(.country), quarter: quarter,
                ageRange: AgeRange(rawValue: text[.ageRange] ?? "") ?? .unknown, gender: Gender(rawValue: text[.gender] ?? "") ?? .unknown)
            let added = StreamCounters(streams: sums.integers.0, skips: sums.integers.1, listeningMs: sums.integers.2)
            streams.update(cell, initial: StreamCounters()) { $0 += added }
        case .revenue:
            let cell = RevenueCell(
                artist: artist, quarter: quarter, source: RevenueSource(rawValue: text[.source] ?? "") ?? .other,
                currency: id(.currency), platform: id(.platform), track: id(.trackID))
            revenue.update(cell, initial: RevenueCounters()) { $0 += RevenueCounters(amount: sums.amount, events: sums.integers.0) }
        case .social:
            let cell = SocialCell(artist: artist, quarter: quarter, platform: id(.platform), action: id(.action))
            social.update(cell, initial: 0) { $0 += sums.integers.0 }
        case .page:
            let cell = PageCell(
                artist: artist, quarter: quarter, portfolio: id(.portfolioID), type: id(.eventType), section: id(.sectionID), block: id(.blockID),
                blockType: id(.blockType), action: id(.action), actionType: id(.actionType), referrer: id(.referrer), country: id(.country))
            page.update(cell, initial: 0) { $0 += sums.integers.0 }
        case .funnel:
            let counts = FunnelCounts(sessions: sums.integers.0, withSection: sums.integers.1, withClick: sums.integers.2)
            funnel.update(FunnelCell(artist: artist, quarter: quarter, portfolio: id(.portfolioID)), initial: FunnelCounts()) { $0 += counts }
        }
    }

    /// Adds `counts` to the page funnel of `artistID`'s `portfolioID` on the local quarter hour of `instant` (a
    /// session's first view): a change a flush made merging sessions with their stored states.
    public mutating func addFunnel(artistID: String, portfolioID: String, at instant: Int64, _ counts: FunnelCounts) {
        let artist = values.id(artistID)
        let quarter = (zones.isEmpty ? instant : localSeconds(instant, artist: artist)).floorDiv(900)
        funnel.update(FunnelCell(artist: artist, quarter: quarter, portfolio: values.id(portfolioID)), initial: FunnelCounts()) { $0 += counts }
    }

    /// Adds states of sessions made elsewhere: the stored part of a session a rebuild counts again
    /// (`FunnelSession.excluding`).
    public mutating func addSessions(_ states: [(key: SessionKey, state: FunnelSession)]) {
        for (key, state) in states {
            let cell = SessionCell(artist: values.id(key.artistID), portfolio: values.id(key.portfolioID), session: sessionIDs.id(key.sessionID))
            sessions.update(cell, initial: state) { $0.formUnion(state) }
        }
    }

    /// The visitor of a `portfolio_view` by its sources (`PageSourceKey`: its referrer and its country), of its page
    /// and of all the artist's pages.
    private mutating func addSourceVisits(artist: UInt32, portfolio: UInt32, referrer: UInt32, country: UInt32, day: Int64, _ hash: Int64) {
        for page in [portfolio, .max] {
            for (kind, value) in [(PageSourceKey.Kind.referrer, referrer), (.country, country)] {
                let key = sourceKey(SourceKeyCell(portfolio: page, kind: kind, value: value))
                sourceVisits.append(ListenedPlay(cell: TrackDayCell(artist: artist, track: key, day: day), hash: hash))
            }
        }
    }

    /// The id of a page source's key (`PageSourceKey.text`), interned the first time it is met.
    private mutating func sourceKey(_ cell: SourceKeyCell) -> UInt32 {
        if let id = sourceKeys[cell] { return id }
        let key = PageSourceKey(cell.kind, values[cell.value], portfolioID: cell.portfolio == .max ? nil : values[cell.portfolio])
        let id = values.id(key.text)
        sourceKeys[cell] = id
        return id
    }

    /// `instant` in the local time of the artist whose id is `artist`.
    private mutating func localSeconds(_ instant: Int64, artist: UInt32) -> Int64 {
        let index = Int(artist)
        if index >= clocks.count { clocks.append(contentsOf: repeatElement(nil, count: max(values.count, index + 1) - clocks.count)) }
        if clocks[index] == nil { clocks[index] = LocalClock(zones[values[artist]]) }
        return clocks[index]!.localSeconds(atSecond: instant)
    }

    /// Adds everything `other` added (its ids, of its own dictionary, are interned again here).
    public mutating func merge(_ other: InternedDelta) {
        let ids = values.intern(other.values)
        for (cell, counters) in other.streams.rows { streams.update(cell.remapped(ids), initial: StreamCounters()) { $0 += counters } }
        for (cell, counters) in other.revenue.rows { revenue.update(cell.remapped(ids), initial: RevenueCounters()) { $0 += counters } }
        for (cell, count) in other.social.rows { social.update(cell.remapped(ids), initial: 0) { $0 += count } }
        for (cell, count) in other.page.rows { page.update(cell.remapped(ids), initial: 0) { $0 += count } }
        let sessionIDs = self.sessionIDs.intern(other.sessionIDs)
        for (cell, state) in other.sessions.rows {
            let key = SessionCell(artist: ids[Int(cell.artist)], portfolio: ids[Int(cell.portfolio)], session: sessionIDs[Int(cell.session)])
            sessions.update(key, initial: state) { $0.formUnion(state) }
        }
        for (cell, counts) in other.funnel.rows { funnel.update(cell.remapped(ids), initial: FunnelCounts()) { $0 += counts } }
        plays.reserveCapacity(plays.count + other.plays.count)
        for play in other.plays { plays.append(ListenedPlay(cell: play.cell.remapped(ids), hash: play.hash)) }
        visits.reserveCapacity(visits.count + other.visits.count)
        for visit in other.visits { visits.append(ListenedPlay(cell: visit.cell.remapped(ids), hash: visit.hash)) }
        sourceVisits.reserveCapacity(sourceVisits.count + other.sourceVisits.count)
        for visit in other.sourceVisits { sourceVisits.append(ListenedPlay(cell: visit.cell.remapped(ids), hash: visit.hash)) }
        rejected.append(contentsOf: other.rejected)
    }

    /// The artists of the delta's rows, each with the span of (local) days of its rows in each family
    /// (`ArtistVersions`' counters): the funnel's sessions are the page family's.
    public var artistDays: ArtistDays {
        var days = ArtistDays()
        // Each family's spans by artist id, in one table reused family after family: only the ids noted are reset.
        var spans = [ClosedRange<Int64>?](repeating: nil, count: values.count)
        var noted: [UInt32] = []
        func note<Rows: Sequence, Row, Value>(
            _ rows: Rows, _ family: ArtistVersions.Families, cell: (Row) -> (artist: UInt32, quarter: Int64)
        ) where Rows.Element == (Row, Value) {
            for (row, _) in rows {
                let (artist, quarter) = cell(row)
                let day = quarter.floorDiv(96)
                if let span = spans[Int(artist)] {
                    if !span.contains(day) { spans[Int(artist)] = span.joined(with: day...day) }
                } else {
                    spans[Int(artist)] = day...day
                    noted.append(artist)
                }
            }
            for artist in noted {
                days.insert(values[artist], family, days: spans[Int(artist)]!)
                spans[Int(artist)] = nil
            }
            noted.removeAll(keepingCapacity: true)
        }
        note(streams.rows, .streams) { ($0.artist, $0.quarter) }
        note(revenue.rows, .revenue) { ($0.artist, $0.quarter) }
        note(social.rows, .social) { ($0.artist, $0.quarter) }
        note(page.rows, .page) { ($0.artist, $0.quarter) }
        note(funnel.rows, .page) { ($0.artist, $0.quarter) }
        return days
    }

    private mutating func id(_ text: EventText, _ record: EventRecord, _ value: UnsafeRawBufferPointer) -> UInt32 {
        record.withBytes(of: text, in: value) { values.id($0) }
    }

    /// An absent optional dimension is stored as "".
    private mutating func id(_ text: EventText?, _ record: EventRecord, _ value: UnsafeRawBufferPointer) -> UInt32 {
        guard let text else { return values.id(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return id(text, record, value)
    }
}

extension InternedDelta {
    /// Unique-listener sketches per artist and day, and per track and day.
    public typealias Listeners = (artists: [(key: ArtistDayCell, value: HyperLogLog)], tracks: [(key: TrackDayCell, value: HyperLogLog)])

    /// The unique listeners per artist and day, and per track and day, of the plays added.
    public var listeners: Listeners { Self.listeners(sorting: plays) }

    /// The unique visitors of the page events added per artist and day, and per page (`TrackDayCell.track` holds the
    /// `portfolio_id`, or a source's key, `PageSourceKey`) and day.
    public var visitors: Listeners { Self.listeners(sorting: visits, keyedOnly: sourceVisits) }

    /// The unique listeners of the plays of several deltas, their ids made ids of one dictionary (`ids[d]` maps
    /// those of `deltas[d]`, as `CombinedDeltas` holds them).
    static func listeners(of deltas: [InternedDelta], ids: [[UInt32]]) -> Listeners {
        listeners(sorting: all(of: deltas, \.plays, ids: ids))
    }

    /// The unique visitors of the page events of several deltas (as `listeners(of:ids:)`).
    static func visitors(of deltas: [InternedDelta], ids: [[UInt32]]) -> Listeners {
        listeners(sorting: all(of: deltas, \.visits, ids: ids), keyedOnly: all(of: deltas, \.sourceVisits, ids: ids))
    }

    /// The plays or visits of `deltas` at `hashes`, their ids made ids of one dictionary.
    private static func all(of deltas: [InternedDelta], _ hashes: KeyPath<InternedDelta, [ListenedPlay]>, ids: [[UInt32]]) -> [ListenedPlay] {
        var all: [ListenedPlay] = []
        all.reserveCapacity(deltas.reduce(0) { $0 + $1[keyPath: hashes].count })
        for (delta, ids) in zip(deltas, ids) {
            for play in delta[keyPath: hashes] { all.append(ListenedPlay(cell: play.cell.remapped(ids), hash: play.hash)) }
        }
        return all
    }

    /// One sort, by artist, day, track, then hash: a track day's plays are then a run, and an artist day's plays are
    /// the runs of its tracks one after another (their hashes sorted again, a few at a time). The sketches of
    /// `keyedOnly`'s keys (never one of `plays`' tracks) are made by a sort of their own and sorted in among the
    /// tracks' by artist, day and key; they add nothing to the artists' sketches.
    private static func listeners(sorting plays: [ListenedPlay], keyedOnly: [ListenedPlay] = []) -> Listeners {
        var artists: [(key: ArtistDayCell, value: HyperLogLog)] = []
        var tracks: [(key: TrackDayCell, value: HyperLogLog)] = []
        var artistDay: ArtistDayCell?
        var artistHashes: [Int64] = []
        func finishArtistDay() {
            guard let artistDay else { return }
            artistHashes.sort()
            artists.append((artistDay, HyperLogLog(sortedDistinctHashes: distinct(sorted: artistHashes))))
            artistHashes.removeAll(keepingCapacity: true)
        }
        forEachKeyDay(sorting: plays) { trackDay, hashes in
            if artistDay?.artist != trackDay.artist || artistDay?.day != trackDay.day {
                finishArtistDay()
                artistDay = ArtistDayCell(artist: trackDay.artist, day: trackDay.day)
            }
            artistHashes.append(contentsOf: hashes)
            tracks.append((trackDay, HyperLogLog(sortedDistinctHashes: hashes)))
        }
        finishArtistDay()
        guard !keyedOnly.isEmpty else { return (artists, tracks) }
        forEachKeyDay(sorting: keyedOnly) { keyDay, hashes in tracks.append((keyDay, HyperLogLog(sortedDistinctHashes: hashes))) }
        tracks.sort { ($0.key.artist, $0.key.day, $0.key.track) < ($1.key.artist, $1.key.day, $1.key.track) }
        return (artists, tracks)
    }

    /// Each key day of `plays` (`TrackDayCell`) with its distinct hashes, sorted, in order of artist, day and key.
    private static func forEachKeyDay(sorting plays: [ListenedPlay], _ body: (TrackDayCell, [Int64]) -> Void) {
        var plays = plays
        plays.sort { ($0.cell.artist, $0.cell.day, $0.cell.track, $0.hash) < ($1.cell.artist, $1.cell.day, $1.cell.track, $1.hash) }
        var index = 0
        while index < plays.count {
            let keyDay = plays[index].cell
            var hashes: [Int64] = []
            while index < plays.count, plays[index].cell == keyDay {
                if hashes.last != plays[index].hash { hashes.append(plays[index].hash) }
                index += 1
            }
            body(keyDay, hashes)
        }
    }

    /// `sorted` without its repeats.
    private static func distinct(sorted: [Int64]) -> [Int64] {
        var distinct = sorted
        var count = 0
        for hash in sorted where count == 0 || distinct[count - 1] != hash {
            distinct[count] = hash
            count += 1
        }
        distinct.removeLast(distinct.count - count)
        return distinct
    }
}

/// A play's listener hash and the track day it counts in.
private struct ListenedPlay {
    var cell: TrackDayCell
    var hash: Int64
}
