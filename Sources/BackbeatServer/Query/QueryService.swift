import BackbeatCore
import BackbeatStore
import NIOCore
import Synchronization

/// Answers validated queries from memory where this instance can answer completely, from PostgreSQL otherwise,
/// and merges the two without counting anything twice:
///
/// - memory holds the query whole (this instance owns every partition, or the query is for one artist whose
///   messages all arrive on partitions it owns and has loaded: `MemoryLayers.covers`): days from the horizon on come
///   from memory (durable + in flight), earlier days from PostgreSQL;
/// - otherwise (another instance owns some of the partitions, or no snapshot yet): PostgreSQL;
/// - either way, plus this instance's pending (consumed, not yet flushed) events, which are nowhere else.
///
/// A query on a full-dimension table (no dashboard cube has its dimensions) is answered by PostgreSQL alone.
///
/// An answer for one artist that memory holds whole is kept encoded in `cache` and reused while the artist's stamp
/// in the layers and the day stay the same (`AnswerCache`); without memory, an answer for one artist is kept while
/// the artist's stamp in the announced stored changes (`StoredChangeListener`) and the day stay the same.
public struct QueryService: Sendable {
    let store: Store
    let memory: LiveMemory?
    /// Where each artist's messages arrive (nil: memory answers only when it holds every partition).
    let artistPartitions: ArtistPartitionCache?
    let cache: AnswerCache?
    /// What answers read from PostgreSQL, kept: from memory the days before the horizon, without memory (by the
    /// announced changes) the days before the day before yesterday (nil: nothing kept).
    let storedParts: StoredParts?
    /// The stored changes announced (an instance without memory keeps answers by them; nil: it keeps none).
    let storedChanges: StoredChangeListener?
    /// Plans made (`plan(artist:)`): one per request.
    let plansMade: SharedCount
    /// The time now: what "today" is for the answers that default to it, and for the cache.
    let clock: @Sendable () -> Timestamp
    /// The artists' reporting zones: an artist's days and hours are local to its zone.
    let zones: ZoneBook
    /// Where the full-dimension tables' quarter hours begin, which reads in another zone may need.
    let quarterHours: QuarterHourHorizon

    init(
        store: Store, memory: LiveMemory?, artistPartitions: ArtistPartitionCache?, cache: AnswerCache?,
        storedParts: StoredParts? = nil, storedChanges: StoredChangeListener? = nil, zones: ZoneBook = ZoneBook(),
        clock: @escaping @Sendable () -> Timestamp = Timestamp.wallClock, plansMade: SharedCount = SharedCount()
    ) {
        self.plansMade = plansMade
        self.zones = zones
        quarterHours = QuarterHourHorizon(store: store)
        self.store = store
        self.memory = memory
        self.artistPartitions = artistPartitions
        precondition(memory == nil || storedChanges == nil, "an instance with memory keeps answers by its memory's stamps")
        self.storedChanges = storedChanges
        self.cache = memory == nil && storedChanges == nil ? nil : cache
        self.storedParts = memory == nil && storedChanges == nil ? nil : storedParts
        self.clock = clock
    }

    /// `artist`'s local day now (days since 1970-01-01 of its zone's calendar).
    func today(of artist: String) -> Int64 {
        zones[artist].localDay(ofSecond: clock().seconds)
    }

    /// `answer(key:over:plan:_:)` for `query`'s interval, planned here.
    func answer(key: String?, for query: Query, _ body: @Sendable (Reads) async throws -> ByteBuffer) async throws -> AnswerBody {
        try await answer(key: key, over: query.interval, plan: try await plan(for: query), body)
    }

    /// `query`'s plan: for its one artist when it filters on exactly one.
    func plan(for query: Query) async throws -> QueryPlan {
        let artists = query.filters[.artistID] ?? []
        return try await plan(artist: artists.count == 1 ? artists[0] : nil)
    }

    /// The plan `ArtistPlanning` made for the request of `context` when it is for `artist`; else one made now.
    func plan(_ context: some PlannedRequestContext, for artist: String) async throws -> QueryPlan {
        if let plan = context.plan, plan.artist == artist { return plan }
        return try await plan(artist: artist)
    }

    /// `plan(_:for:)` for `query`'s one artist.
    func plan(_ context: some PlannedRequestContext, for query: Query) async throws -> QueryPlan {
        let artists = query.filters[.artistID] ?? []
        guard artists.count == 1 else { return try await plan(artist: nil) }
        return try await plan(context, for: artists[0])
    }

    /// The one decision of what a request's answer reads: the memory layers as they are now, and whether they hold
    /// everything it reads: every partition, or, for `artist`, every partition the artist's messages arrive on.
    func plan(artist: String?) async throws -> QueryPlan {
        plansMade.add()
        let layers = memory?.snapshot()
        var holdsAll = layers?.complete ?? false
        if let layers, !holdsAll, layers.installed, let artist, let artistPartitions {
            holdsAll = layers.covers(try await artistPartitions.partitions(of: artist))
        }
        return QueryPlan(artist: artist, layers: layers, memoryHoldsAll: holdsAll)
    }

    /// The encoded answer `body` makes from the reads `plan` decided over `interval` (what it reads of its artist),
    /// of one snapshot: the memory layers as they were planned, whichever flushes commit meanwhile, and, unless
    /// memory holds every day from `interval.from` on, one
    /// database snapshot (`Store.withReadSnapshot`). An answer is then never half before and half after a flush or a
    /// `rebuild`'s swap. (A query on a table memory does not hold still reads PostgreSQL outside a database snapshot
    /// when memory covers `from`.) With `key` (what names the answer: the request's path and query), an answer for
    /// one artist memory holds whole is taken from the cache when one was made under the artist's stamp over the
    /// interval's days in the event families the body read (`Reads` records them: a stream does not retire a revenue
    /// answer) and today's day, and kept there when nothing of the artist's in those families on those days changed
    /// while it was made. A kept answer is answered as kept: compressed when large (`AnswerBody`); any other as made.
    func answer(
        key: String?, over interval: QueryInterval, plan: QueryPlan, oneStatement: Bool = false,
        _ body: @Sendable (Reads) async throws -> ByteBuffer
    ) async throws -> AnswerBody {
        var reads = Reads(
            store: store, memory: memory, layers: plan.layers, memoryHoldsAll: plan.memoryHoldsAll, artist: plan.artist,
            storedParts: storedParts, storedChanges: storedChanges)
        if memory == nil, storedParts != nil, storedChanges != nil, let artist = plan.artist {
            // What arrives changes the artist's last days: a UTC day of events spans two of its local days, and events
            // come late. The days before are read through the parts kept.
            reads.freshFrom = today(of: artist) - 2
        }
        let answerAlone = plan.memoryAnswersAlone(from: interval.from)
        func notKept() async throws -> AnswerBody { AnswerBody(plain: try await read(reads, alone: answerAlone, oneStatement: oneStatement, body)) }
        let days = interval.days
        // The layers as planned are still those now (or the announced changes are heard).
        guard let cache, let key, let artist = plan.artist, let stamps = stamps(plan, of: artist),
              let before = stamps.planned(days), stamps.now(days) == before else { return try await notKept() }
        let current: @Sendable () -> ArtistVersions.Stamps? = { stamps.now(days) }
        let validity = AnswerCache.Validity(stamps: before, days: days, day: today(of: artist))
        let familiesRead = Reads.FamiliesRead()
        reads.familiesRead = familiesRead
        var made = false
        let answer = try await cache.answer(key, validity) {
            made = true
            let answer = try await read(reads, alone: answerAlone, oneStatement: oneStatement, body)
            let families = familiesRead.families
            return (answer, current()?.stamp(reading: families) == before.stamp(reading: families) ? families : nil)
        }
        if !made { memory?.record(.cache) }
        return answer
    }

    /// The answer kept for `key` (a request's path and query) when nothing it read changed, as `plan` finds its one
    /// artist (memory holding the artist whole, or without memory the announced stored changes): what
    /// `answer(key:over:plan:oneStatement:_:)` would answer from the cache, found before the request is parsed or its
    /// queries built (an answer is kept only for a request that was both, and the same path and query build the
    /// same queries while the artist's stamps and day stay the same). Nil: the request is answered by its route.
    func keptAnswer(key: String, plan: QueryPlan) -> AnswerBody? {
        guard let cache, let artist = plan.artist, let stamps = stamps(plan, of: artist),
              let kept = cache.kept(key, day: today(of: artist), stamps: stamps.planned) else { return nil }
        memory?.record(.cache)
        return kept
    }

    /// What says whether an answer for `artist` read something that changed, over the days it reads: the stamps as
    /// `plan` has them (its memory layers, or without memory the announced changes) and as they are now. Nil when no
    /// answer for the artist is kept: memory does not hold it whole, or without memory nothing is announced.
    private func stamps(_ plan: QueryPlan, of artist: String) -> (
        planned: @Sendable (Range<Int64>) -> ArtistVersions.Stamps?, now: @Sendable (Range<Int64>) -> ArtistVersions.Stamps?
    )? {
        if let memory, let layers = plan.layers, plan.memoryHoldsAll {
            return ({ layers.stamps(of: artist, days: $0) }, { memory.stamps(of: artist, days: $0) })
        }
        guard memory == nil, let storedChanges else { return nil }
        let announced: @Sendable (Range<Int64>) -> ArtistVersions.Stamps? = { storedChanges.stamps(of: artist, days: $0) }
        return (announced, announced)
    }

    /// `body`'s answer from `reads`: inside one database snapshot unless memory answers `alone`, or answers with the
    /// parts it reads from PostgreSQL all kept (`StoredParts`), or (`oneStatement`: the body reads PostgreSQL once)
    /// it sends PostgreSQL one statement, which is a snapshot of its own. Each is tried in turn: a body that finds a
    /// part not kept, or sends a second statement, is made again the next way.
    private func read(_ reads: Reads, alone: Bool, oneStatement: Bool, _ body: @Sendable (Reads) async throws -> ByteBuffer) async throws -> ByteBuffer {
        if alone { return try await body(reads) }
        if reads.storedParts != nil, reads.memoryHoldsAll, reads.artist != nil {
            var keptOnly = reads
            keptOnly.keptPartsOnly = true
            do {
                return try await body(keptOnly)
            } catch is Reads.PartNotKept {}
        }
        if oneStatement {
            var once = reads
            once.statementOutsideSnapshot = Reads.OneStatement()
            do {
                return try await body(once)
            } catch is Reads.SnapshotNeeded {}
        }
        return try await store.withReadSnapshot { try await body(reads) }
    }

    /// The reads of one answer, from the one snapshot `answer(key:over:plan:_:)` reads.
    public struct Reads: Sendable {
        let store: Store
        let memory: LiveMemory?
        /// The memory layers as of the start of the answer (nil: memory is disabled).
        let layers: MemoryLayers?
        /// Whether the layers hold everything these reads read (from the horizon on).
        let memoryHoldsAll: Bool
        /// The one artist read (nil: any).
        let artist: String?
        /// What reads from memory (or, without memory, of the days before `freshFrom`) read from PostgreSQL, kept.
        let storedParts: StoredParts?
        /// The stored changes announced: without memory, what the parts kept are kept under.
        let storedChanges: StoredChangeListener?
        /// Without memory, the first day the reads of the one artist take from PostgreSQL afresh: the days before it
        /// are read through the parts kept (`StoredParts`) under the announced changes' stamps over them, so that a miss
        /// after the artist's events of its last days reads PostgreSQL for three days, not 28; a part not kept is read
        /// in the same statement (`storedKeepingOlder`). Nil: every read whole.
        var freshFrom: Int64?
        /// Read PostgreSQL only through the parts kept: a part not kept throws `PartNotKept`.
        var keptPartsOnly = false
        /// Without a database snapshot, the one statement these reads may send to PostgreSQL (nil: as many as they
        /// need, inside a snapshot): a second throws `SnapshotNeeded`.
        var statementOutsideSnapshot: OneStatement?
        /// Where the reads note the event families they read (nil: nobody asks).
        var familiesRead: FamiliesRead?

        /// The event families an answer's reads read, noted by each read: what the answer is kept under.
        final class FamiliesRead: Sendable {
            private let read = Atomic<UInt8>(0)

            func insert(_ families: ArtistVersions.Families) {
                read.bitwiseOr(families.rawValue, ordering: .relaxed)
            }

            var families: ArtistVersions.Families { ArtistVersions.Families(rawValue: read.load(ordering: .relaxed)) }
        }

        /// A part of the reads that PostgreSQL would have to answer is not kept (`keptPartsOnly`).
        struct PartNotKept: Error {}

        /// The reads send PostgreSQL more than the one statement they may outside a snapshot.
        struct SnapshotNeeded: Error {}

        /// The one statement an answer's reads may send without a database snapshot, taken by the first.
        final class OneStatement: Sendable {
            private let taken = Atomic<Bool>(false)

            func take() throws(SnapshotNeeded) {
                guard !taken.exchange(true, ordering: .relaxed) else { throw SnapshotNeeded() }
            }
        }

        /// `read`, `statements` statements to PostgreSQL: counted against `statementOutsideSnapshot`.
        private func fromStore<Value>(_ statements: Int = 1, _ read: () async throws -> Value) async throws -> Value {
            for _ in 0..<statements { try statementOutsideSnapshot?.take() }
            return try await read()
        }

        public func answer(_ query: Query) async throws -> [QueryRow] {
            try ResultShaper.shape(try await rows(for: query), for: query)
        }

        /// The answer to `query` (on the artist's stored clock) in the periods of another zone: its stored hours read and
        /// summed into the periods `regrouping` places them in, then shaped on that zone's clock (`tz=`).
        public func answer(_ query: Query, regrouped regrouping: ZoneRegrouping) async throws -> [QueryRow] {
            try Self.shape(try await regroupedRows(query, regrouping), of: query, in: regrouping)
        }

        /// `rows` shaped as the answer to `query`: on the artist's clock, or in `regrouping`'s periods (already
        /// summed into them), on that zone's.
        private static func shape(_ rows: [QueryRow], of query: Query, in regrouping: ZoneRegrouping?) throws -> [QueryRow] {
            guard let regrouping else { return try ResultShaper.shape(rows, for: query) }
            var reading = query
            reading.interval = regrouping.reading
            return try ResultShaper.shape(rows, for: reading)
        }

        /// The answers to `queries`, in their order (in another zone's periods with `regrouping`): without memory, the
        /// blocks of them all are read in one statement (`Store.rowsAndSketches`); with memory, each is split between
        /// memory and PostgreSQL on its own, one after another (`eachAnswer`).
        public func answers(_ queries: [Query], regrouped regrouping: ZoneRegrouping? = nil) async throws -> [[QueryRow]] {
            try await answers(queries, regrouped: regrouping, listeners: nil, granularity: .all, regroupedBy: nil).rows
        }

        /// `answers(_:regrouped:)`, and with `scope` the unique listeners (or visitors) of `scope` as
        /// `listenersPerPeriodAndInAll` counts them (nil without): without memory, all in one statement.
        public func answers(
            _ queries: [Query], regrouped regrouping: ZoneRegrouping?, listeners scope: ListenerScope?, granularity: Granularity,
            regroupedBy periodOfStoredDay: [Int64: Timestamp]?
        ) async throws -> (rows: [[QueryRow]], listeners: (perPeriod: [Timestamp?: Double], inAll: Double)?) {
            let sketchGranularity = periodOfStoredDay == nil ? granularity : .day
            let rows: [[QueryRow]], sketches: [Timestamp?: HyperLogLog]?
            if memory == nil, regrouping == nil, freshFrom != nil {
                let read = try await storedKeepingOlder(queries, scope.map { [.periods($0, sketchGranularity)] } ?? [])
                rows = try zip(queries, read.rows).map { try ResultShaper.shape($1, for: $0) }
                sketches = scope == nil ? nil : Store.periods(read.sketches[0])
            } else if memory == nil {
                let read = try await together(queries, regrouping, scope.map { [.periods($0, sketchGranularity)] } ?? [])
                (rows, sketches) = (read.rows, scope == nil ? nil : Store.periods(read.sketches[0]))
            } else {
                rows = try await eachAnswer(queries, regrouping)
                if let scope {
                    sketches = try await listenerSketches(scope, granularity: sketchGranularity)
                } else {
                    sketches = nil
                }
            }
            return (rows, sketches.map { Self.listeners($0, granularity: granularity, regroupedBy: periodOfStoredDay) })
        }

        /// Each of `queries` answered on its own, one after another, on this task. Nothing would be gained by child
        /// tasks: memory's reads are work on this thread, and what is read from PostgreSQL is kept
        /// (`StoredParts`) or read inside a snapshot, whose statements take its one connection in turn. A child task
        /// would only queue the answer behind every other request's work on the cooperative pool, once to start and
        /// once to resume (docs/performance.md, "A miss made on its own task").
        private func eachAnswer(_ queries: [Query], _ regrouping: ZoneRegrouping?) async throws -> [[QueryRow]] {
            var answers: [[QueryRow]] = []
            answers.reserveCapacity(queries.count)
            for query in queries { answers.append(try await answer(query, regrouping)) }
            return answers
        }

        /// `query`'s answer, in `regrouping`'s periods if any. Not inlined: inlined into `eachAnswer`'s loop, the
        /// release build of Swift 6.3.1 crashes splitting the coroutine (docs/performance.md, "The Swift 6.3.1
        /// optimizer crash").
        @inline(never)
        private func answer(_ query: Query, _ regrouping: ZoneRegrouping?) async throws -> [QueryRow] {
            guard let regrouping else { return try await answer(query) }
            return try await answer(query, regrouped: regrouping)
        }

        /// The answers to `queries` (in `regrouping`'s periods) and the unions of `sketches`, from PostgreSQL in one
        /// statement (`Store.rowsAndSketches`).
        private func together(
            _ queries: [Query], _ regrouping: ZoneRegrouping?, _ sketches: [SketchRead]
        ) async throws -> (rows: [[QueryRow]], sketches: [[String?: HyperLogLog]]) {
            for query in queries { familiesRead?.insert(ArtistVersions.Families(query.dataset)) }
            for sketch in sketches { familiesRead?.insert(ArtistVersions.Families(sketch.kind)) }
            let reading = regrouping.map { regrouping in queries.map { Self.slots(of: $0, regrouping) } } ?? queries
            let read = try await Self.sayingSlots(regrouping) {
                try await fromStore(Store.statements(answering: reading, sketches: sketches)) { try await store.rowsAndSketches(reading, sketches) }
            }
            let rows = try zip(queries, read.rows).map { query, rows in
                try Self.shape(regrouping.map { $0.regroup(rows) } ?? rows, of: query, in: regrouping)
            }
            return (rows, read.sketches)
        }

        /// Without memory, with `freshFrom`: the rows of `queries` (summed, not shaped) and the unions of `sketches`, the
        /// days before `freshFrom` from the parts kept, everything else (the days from it, and the parts not kept, which
        /// are kept once read when no change of their days was announced meanwhile) in one statement.
        private func storedKeepingOlder(
            _ queries: [Query], _ sketches: [SketchRead]
        ) async throws -> (rows: [[QueryRow]], sketches: [[String?: HyperLogLog]]) {
            for query in queries { familiesRead?.insert(ArtistVersions.Families(query.dataset)) }
            for sketch in sketches { familiesRead?.insert(ArtistVersions.Families(sketch.kind)) }
            var rows = queries.map { _ in [[QueryRow]]() }
            var unions = sketches.map { _ in [[String?: HyperLogLog]]() }
            var reading: [Query] = [], readingFor: [Int] = []
            var sketchReading: [SketchRead] = [], sketchReadingFor: [Int] = []
            var keeping: [(at: Int, isSketch: Bool, key: StoredParts.Key, days: Range<Int64>, stamp: ArtistVersions.Stamp)] = []
            for (index, query) in queries.enumerated() {
                let (older, fresh) = splitAtFresh(query)
                if let older {
                    let (part, stamp) = announcedPart(.rows(older), days: older.interval.days)
                    if case .rows(let kept)? = part {
                        rows[index].append(kept)
                    } else {
                        if let stamp { keeping.append((reading.count, false, .rows(older), older.interval.days, stamp)) }
                        reading.append(older)
                        readingFor.append(index)
                    }
                }
                if let fresh {
                    reading.append(fresh)
                    readingFor.append(index)
                }
            }
            for (index, sketch) in sketches.enumerated() {
                let (olderDays, freshDays) = splitAtFresh(sketch.days)
                if let olderDays {
                    let older = sketch.with(days: olderDays)
                    let (part, stamp) = announcedPart(.sketches(older), days: olderDays)
                    if case .unions(let kept)? = part {
                        unions[index].append(kept)
                    } else {
                        if let stamp { keeping.append((sketchReading.count, true, .sketches(older), olderDays, stamp)) }
                        sketchReading.append(older)
                        sketchReadingFor.append(index)
                    }
                }
                if let freshDays {
                    sketchReading.append(sketch.with(days: freshDays))
                    sketchReadingFor.append(index)
                }
            }
            if !reading.isEmpty || !sketchReading.isEmpty {
                let read = try await fromStore(Store.statements(answering: reading, sketches: sketchReading)) {
                    try await store.rowsAndSketches(reading, sketchReading)
                }
                for (at, index) in readingFor.enumerated() { rows[index].append(read.rows[at]) }
                for (at, index) in sketchReadingFor.enumerated() { unions[index].append(read.sketches[at]) }
                if let storedParts {
                    for keep in keeping where announcedStamp(keep.days) == keep.stamp {
                        storedParts.keep(keep.isSketch ? .unions(read.sketches[keep.at]) : .rows(read.rows[keep.at]), for: keep.key, keep.stamp)
                    }
                }
            }
            return (rows.map { QueryService.sum($0) }, unions.map { parts in
                var union: [String?: HyperLogLog] = [:]
                for part in parts {
                    for (key, sketch) in part { union[key, default: HyperLogLog()].formUnion(sketch) }
                }
                return union
            })
        }

        /// Without memory: the stamp the announced changes give the artist's days `days` (nil: none to keep by).
        private func announcedStamp(_ days: Range<Int64>) -> ArtistVersions.Stamp? {
            guard memory == nil, let storedChanges, let artist else { return nil }
            return storedChanges.stamps(of: artist, days: days)?.stamp(reading: .all)
        }

        /// Without memory: the part kept for `key` under the announced stamp over `days` (counted), and that stamp.
        private func announcedPart(_ key: StoredParts.Key, days: Range<Int64>) -> (part: StoredParts.Part?, stamp: ArtistVersions.Stamp?) {
            guard let storedParts, let stamp = announcedStamp(days) else { return (nil, nil) }
            let part = storedParts.part(key, stamp)
            storedParts.record(hit: part != nil)
            return (part, stamp)
        }

        /// `query` split at `freshFrom`: its days before it, and its days from it (nil: none).
        private func splitAtFresh(_ query: Query) -> (older: Query?, fresh: Query?) {
            guard let freshFrom else { return (nil, query) }
            let split = Timestamp(seconds: freshFrom * 86_400)
            var older = query, fresh = query
            older.interval.to = min(query.interval.to, split)
            fresh.interval.from = max(query.interval.from, split)
            return (older.interval.from < older.interval.to ? older : nil, fresh.interval.from < fresh.interval.to ? fresh : nil)
        }

        /// `days` split at `freshFrom`, as `splitAtFresh(_:)` splits a query.
        private func splitAtFresh(_ days: Range<Int64>) -> (older: Range<Int64>?, fresh: Range<Int64>?) {
            guard let freshFrom else { return (nil, days) }
            let split = min(max(freshFrom, days.lowerBound), days.upperBound)
            return (split > days.lowerBound ? days.lowerBound..<split : nil, split < days.upperBound ? split..<days.upperBound : nil)
        }

        /// The rows of each part, summed: a part with a regrouping read by its stored hours into that zone's periods,
        /// one without as it is (not shaped: `ResultShaper` shapes the sum).
        public func rows(of parts: [(query: Query, regrouping: ZoneRegrouping?)]) async throws -> [QueryRow] {
            var summed: [[QueryRow]] = []
            for (query, regrouping) in parts {
                if let regrouping {
                    summed.append(try await regroupedRows(query, regrouping))
                } else {
                    summed.append(try await rows(for: query))
                }
            }
            return QueryService.sum(summed)
        }

        /// `query`'s rows read by stored slot (hour or quarter hour) over `regrouping.stored` and summed into its periods.
        private func regroupedRows(_ query: Query, _ regrouping: ZoneRegrouping) async throws -> [QueryRow] {
            let slots = Self.slots(of: query, regrouping)
            return regrouping.regroup(try await Self.sayingSlots(regrouping) { try await rows(for: slots) })
        }

        /// `query` asked by stored slot (hour or quarter hour) over `regrouping.stored`, unordered and whole.
        private static func slots(of query: Query, _ regrouping: ZoneRegrouping) -> Query {
            var slots = query
            slots.interval = regrouping.stored
            slots.granularity = regrouping.slotGranularity
            slots.orderBy = nil
            slots.limit = nil
            return slots
        }

        /// `read`'s result, with `regrouping` a refusal by retention saying that the read in another zone summed stored slots.
        private static func sayingSlots<Value>(_ regrouping: ZoneRegrouping?, _ read: () async throws -> Value) async throws -> Value {
            do {
                return try await read()
            } catch let error as QueryError where error.code == .droppedByRetention {
                guard let regrouping else { throw error }
                let kept = regrouping.slotSeconds == 900 ? "quarter hours (kept for --detail-days)" : "hours"
                throw QueryError(error.code, "a read in another zone (tz) sums the artist's stored \(kept): \(error.message)")
            }
        }

        /// Unique listeners per period (nil key for `all`) and over them all, the union of the periods' sketches (no
        /// second read: a union of unions is the union of all). With `periodOfStoredDay`, the periods are another
        /// zone's: the sketches of the stored days of `scope`, each united into the period it places the day in.
        public func listenersPerPeriodAndInAll(
            _ scope: ListenerScope, granularity: Granularity, regroupedBy periodOfStoredDay: [Int64: Timestamp]? = nil
        ) async throws -> (perPeriod: [Timestamp?: Double], inAll: Double) {
            let sketches = try await listenerSketches(scope, granularity: periodOfStoredDay == nil ? granularity : .day)
            return Self.listeners(sketches, granularity: granularity, regroupedBy: periodOfStoredDay)
        }

        /// Unique listeners per period and in all from the unions of `sketches` (per period of `granularity`, or with
        /// `periodOfStoredDay` per stored day, each united into the period it places the day in).
        private static func listeners(
            _ sketches: [Timestamp?: HyperLogLog], granularity: Granularity, regroupedBy periodOfStoredDay: [Int64: Timestamp]?
        ) -> (perPeriod: [Timestamp?: Double], inAll: Double) {
            var periods = periodOfStoredDay == nil ? sketches : [:]
            var all = HyperLogLog()
            for (period, sketch) in sketches {
                if let periodOfStoredDay {
                    guard let day = period, let regrouped = periodOfStoredDay[day.seconds.floorDiv(86_400)] else { continue }
                    periods[granularity == .all ? nil : regrouped, default: HyperLogLog()].formUnion(sketch)
                }
                all.formUnion(sketch)
            }
            return (periods.mapValues(\.cardinality), all.cardinality)
        }

        private func listenerSketches(_ scope: ListenerScope, granularity: Granularity) async throws -> [Timestamp?: HyperLogLog] {
            familiesRead?.insert(ArtistVersions.Families(scope.kind))
            if layers == nil, freshFrom != nil { return Store.periods(try await storedKeepingOlder([], [.periods(scope, granularity)]).sketches[0]) }
            @Sendable func part(_ days: Range<Int64>) -> ListenerScope { scope.with(days: days) }
            return try await merged(days: scope.days, wholeMonths: [.month, .all].contains(granularity)) { memory, days in
                memory.listenerSketches(part(days), granularity: granularity)
            } stored: { [store] days in
                try await store.listenerSketches(part(days), granularity: granularity)
            } kept: {
                .listeners(part($0), granularity)
            } as: {
                .periodSketches($0)
            } from: {
                if case .periodSketches(let sketches) = $0 { sketches } else { nil }
            }
        }

        /// Unique listeners per track, or unique visitors per page or page source (`PageSourceKey`), over `days`.
        public func keyedCounts(_ kind: ListenerScope.Kind, artistID: String, keys: [String], days: Range<Int64>) async throws -> [String: Double] {
            familiesRead?.insert(ArtistVersions.Families(kind))
            if layers == nil, freshFrom != nil {
                let read = try await storedKeepingOlder([], [.keyed(kind, artistID: artistID, keys: keys, days: days)])
                return Store.keyed(read.sketches[0]).mapValues(\.cardinality)
            }
            let sketches = try await merged(days: days, wholeMonths: true) { memory, days in
                memory.keyedSketches(kind, artistID: artistID, keys: keys, days: days)
            } stored: { [store] days in
                try await store.keyedSketches(kind, artistID: artistID, keys: keys, days: days)
            } kept: {
                .keyed(kind, artistID: artistID, keys: keys, days: $0)
            } as: {
                .keyedSketches($0)
            } from: {
                if case .keyedSketches(let sketches) = $0 { sketches } else { nil }
            }
            return sketches.mapValues(\.cardinality)
        }

        // MARK: - Splitting and merging

        /// The first day a read from `from` on takes from memory (which holds everything from its horizon on): the
        /// horizon; but when PostgreSQL is read anyway (`from` is before the horizon) and the read can take
        /// `wholeMonths`, the ended months PostgreSQL keeps month rows of (`Store.monthRowsEnd`) come from there,
        /// one row a month rather than one a day.
        private func memoryFrom(_ from: Int64, wholeMonths: Bool) -> Int64 {
            guard let layers else { return from }
            let horizon = layers.durable.horizonDay
            guard wholeMonths, from < horizon, let monthRowsEnd = store.monthRowsEnd(today: Timestamp.wallClock().daysSinceEpoch) else { return horizon }
            return max(horizon, monthRowsEnd)
        }

        private func rows(for query: Query) async throws -> [QueryRow] {
            familiesRead?.insert(ArtistVersions.Families(query.dataset))
            guard let memory, let layers else {
                if freshFrom != nil { return try await storedKeepingOlder([query], []).rows[0] }
                return try await fromStore(Store.statements(answering: [query])) { try await store.rows(for: query) }
            }
            var parts: [[QueryRow]] = []
            var stored: Query? = query
            if memoryHoldsAll, CubeMemory.holds(Cube.plan(for: query)) {
                let wholeMonths = [.month, .all].contains(query.granularity)
                let split = Timestamp(seconds: max(memoryFrom(query.interval.from.seconds.floorDiv(86_400), wholeMonths: wholeMonths), -1_000_000) * 86_400)
                if split < query.interval.to {
                    var recent = query
                    recent.interval.from = max(query.interval.from, split)
                    parts.append(layers.durable.rows(for: recent) ?? [])
                    parts.append(layers.inFlight?.rows(for: recent) ?? [])
                }
                if split > query.interval.from {
                    stored?.interval.to = min(query.interval.to, split)
                } else {
                    stored = nil
                }
            }
            if let stored {
                parts.append(try await kept(.rows(stored), days: stored.interval.days, { try await fromStore(Store.statements(answering: [stored])) { try await store.rows(for: stored) } }, as: StoredParts.Part.rows) {
                    if case .rows(let rows) = $0 { rows } else { nil }
                })
            }
            parts.append(layers.pending.rows(for: query) ?? [])
            memory.record(stored == nil ? .memory : stored == query ? .postgres : .memoryAndPostgres)
            return QueryService.sum(parts)
        }

        /// Sketches of `days`, merged the same way as rows: unions are idempotent, but the split keeps PostgreSQL out
        /// of the queries memory can answer. What PostgreSQL answers is read (and kept, as `key` names it) in up to
        /// two parts: the days before the first whole month, then the whole months, which the answers over a year
        /// ending on different days share.
        private func merged<Key: Hashable>(
            days: Range<Int64>, wholeMonths: Bool,
            memory read: (CubeMemory, Range<Int64>) -> [Key: HyperLogLog],
            stored readStored: @escaping @Sendable (Range<Int64>) async throws -> [Key: HyperLogLog],
            kept key: (Range<Int64>) -> StoredParts.Key,
            as wrap: ([Key: HyperLogLog]) -> StoredParts.Part,
            from unwrap: (StoredParts.Part) -> [Key: HyperLogLog]?
        ) async throws -> [Key: HyperLogLog] {
            guard let layers else { return try await fromStore { try await readStored(days) } }
            var parts: [[Key: HyperLogLog]] = [read(layers.pending, days)]
            var storedDays: Range<Int64>? = days
            if memoryHoldsAll {
                let split = min(max(memoryFrom(days.lowerBound, wholeMonths: wholeMonths), days.lowerBound), days.upperBound)
                parts.append(read(layers.durable, split..<days.upperBound))
                if let inFlight = layers.inFlight { parts.append(read(inFlight, split..<days.upperBound)) }
                storedDays = split > days.lowerBound ? days.lowerBound..<split : nil
            }
            if let storedDays {
                let firstWholeMonth = CivilDate(daysSinceEpoch: storedDays.lowerBound - 1).firstOfNextMonth.daysSinceEpoch
                for piece in [storedDays.lowerBound..<min(firstWholeMonth, storedDays.upperBound), firstWholeMonth..<max(firstWholeMonth, storedDays.upperBound)] where !piece.isEmpty {
                    parts.append(try await kept(key(piece), days: piece, { try await fromStore { try await readStored(piece) } }, as: wrap, unwrap))
                }
            }
            var result: [Key: HyperLogLog] = [:]
            for part in parts {
                for (key, sketch) in part { result[key, default: HyperLogLog()].formUnion(sketch) }
            }
            return result
        }

        /// What `read` reads from PostgreSQL over `days`: with memory holding the artist whole, the part kept under
        /// the artist's stamp over `days` if there is one; else read, and kept when the stamp did not move while it
        /// was read (nothing of the artist on those days was consumed or flushed meanwhile). With `keptPartsOnly`, a
        /// part not kept throws `PartNotKept` rather than being read.
        private func kept<Value>(
            _ key: StoredParts.Key, days: Range<Int64>, _ read: () async throws -> Value,
            as wrap: (Value) -> StoredParts.Part, _ unwrap: (StoredParts.Part) -> Value?
        ) async throws -> Value {
            guard let storedParts, let artist, let memory, let layers, memoryHoldsAll else { return try await read() }
            let planned = layers.stamp(of: artist, reading: .all, days: days)
            if let part = storedParts.part(key, planned).flatMap(unwrap) {
                storedParts.record(hit: true)
                return part
            }
            if keptPartsOnly { throw PartNotKept() }
            storedParts.record(hit: false)
            let value = try await read()
            if memory.stamps(of: artist, days: days)?.stamp(reading: .all) == planned { storedParts.keep(wrap(value), for: key, planned) }
            return value
        }
    }

    /// Rows of the same period and group added together.
    static func sum(_ parts: [[QueryRow]]) -> [QueryRow] {
        let nonEmpty = parts.filter { !$0.isEmpty }
        if nonEmpty.count <= 1 { return nonEmpty.first ?? [] }
        var sums: [RowKey: [MetricValue]] = [:]
        var order: [RowKey] = []
        for part in nonEmpty {
            for row in part {
                let key = RowKey(periodStart: row.periodStart, groupValues: row.groupValues)
                if let existing = sums[key] {
                    sums[key] = zip(existing, row.metrics).map { $0.adding($1) }
                } else {
                    sums[key] = row.metrics
                    order.append(key)
                }
            }
        }
        return order.map { QueryRow(periodStart: $0.periodStart, groupValues: $0.groupValues, metrics: sums[$0]!) }
    }

    private struct RowKey: Hashable {
        var periodStart: Timestamp?
        var groupValues: [String]
    }
}
