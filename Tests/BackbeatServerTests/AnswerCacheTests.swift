@testable import BackbeatServer
import BackbeatCore
import BackbeatStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Synchronization
import Testing

/// The answer cache in process, against a real PostgreSQL: two routers over the same memory and store, one keeping
/// answers and one not, asked every artist endpoint after each change that may alter an answer. Their answers are
/// always equal; the cache misses for the artist after each change that touches a day and an event family it read (a
/// flush of its events, a late event, a replay or a rebuild by another process, retention, a change of ownership, a new day) and
/// still hits after another artist's flush and after the artist's events of days it did not read.
@Suite(.serialized) struct AnswerCacheTests {
    static let artist = RouteTests.artist
    static let partition = TopicPartition(topic: "streams", partition: 1)
    /// The day the tests run "on": the day after the generated events.
    static let today = CivilDate(year: 2026, month: 10, day: 12).daysSinceEpoch

    /// Every artist endpoint, the summary also without `as_of` (it then depends on the day). The days they read: six
    /// 2026-10-01 to 2026-10-10 (`RouteTests.range`), the summary as of 2026-10-11 the 56 days before it
    /// (2026-08-16 on), and the last two up to 2026-10-11, the day before `today`.
    static let uris = RouteTests.artistRoutes.map { "/v1/artists/\(artist)/\($0.path)?\($0.query)" }
        + ["/v1/artists/\(artist)/summary", "/v1/artists/\(artist)/streams?from=2026-08-01&to=2026-10-12&granularity=month"]
    /// How many of `uris` read 2026-09-20 (the three that reach before October), and 2026-10-11 (the last two).
    static let readingSeptember20 = 3, readingOctober11 = 2
    /// How many of `uris` read social events (the social series and both summaries): the others read other families.
    static let readingSocial = uris.filter { $0.contains("/social?") || $0.contains("/summary") }.count
    /// How many of `uris` read stream events (all but the revenue, social and page answers).
    static let readingStreams = uris.filter { !$0.contains("/revenue?") && !$0.contains("/social?") && !$0.contains("/page") }.count

    @Test func answersAreReusedUntilWhatTheyReadChangesAndEqualWithoutTheCache() async throws {
        let events = RouteTests.events()
        try await RouteTests.withPopulatedStore(events) { store, _ in
            let clock = Mutex(Timestamp(seconds: Self.today * 86_400 + 3_600))
            let now: @Sendable () -> Timestamp = { clock.withLock { $0 } }
            let ingest = IngestService(
                configuration: IngestConfiguration(brokers: "unused", memory: MemoryConfiguration(retentionDays: 35)), store: store,
                logger: RouteTests.logger)
            let horizon = CivilDate(year: 2026, month: 10, day: 1).daysSinceEpoch
            ingest.own([Self.partition])
            @Sendable func install() async throws {
                let installed = try await ingest.installSnapshot(fromDay: horizon, owned: [Self.partition])
                #expect(installed)
            }
            try await install()
            try await Self.withAndWithoutCache(store: store, ingest: ingest, clock: now) { ask in
                var offset: Int64 = 0
                func flush(_ events: [Event]) async throws {
                    try await Self.flush(events, ingest: ingest, offset: &offset)
                }
                // Another artist on another of the shared counters (`ArtistVersions`).
                let other = (1...50).map { "artist-other-\($0)" }.first { ArtistDays([$0], .streams, days: 0...0) != ArtistDays([Self.artist], .streams, days: 0...0) }!
                let count = Self.uris.count

                #expect(try await ask("first") == 0)
                #expect(try await ask("nothing changed") == count)

                try await flush([Self.play(Self.artist, on: CivilDate(year: 2026, month: 10, day: 5), "a1")])
                #expect(try await ask("a flush of the artist's event") == count - Self.readingStreams)
                #expect(try await ask("after it") == count)

                try await flush([Self.play(Self.artist, on: CivilDate(year: 2026, month: 10, day: 12), "a2")])
                #expect(try await ask("the artist's event of today, which no answer reads") == count)
                try await flush([Self.play(Self.artist, on: CivilDate(year: 2026, month: 10, day: 11), "a3")])
                #expect(try await ask("the artist's event of yesterday") == count - Self.readingOctober11)
                #expect(try await ask("after it") == count)

                try await flush([Self.play(other, on: CivilDate(year: 2026, month: 10, day: 5), "o1")])
                #expect(try await ask("another artist's flush") == count)

                let follow = SocialEvent(
                    eventID: "f1", occurredAt: Timestamp(seconds: CivilDate(year: 2026, month: 10, day: 5).daysSinceEpoch * 86_400 + 7_200),
                    artistID: Self.artist, platform: "instagram", action: "follow", count: 1)
                try await flush([.social(follow)])
                #expect(Self.readingSocial == 3)
                #expect(try await ask("a follow of the artist, which only the answers reading social events read") == count - Self.readingSocial)
                #expect(try await ask("after it") == count)

                ingest.consume([Self.play(Self.artist, on: CivilDate(year: 2026, month: 9, day: 20), "late")], on: Self.partition, from: offset)
                offset += 1
                await ingest.state.settled()
                #expect(try await ask("a late event consumed") == count - Self.readingSeptember20)
                let lateFlush = try #require(ingest.startFlush())
                #expect(try await ask("its flush started") == count - Self.readingSeptember20)
                try await ingest.finishFlush(lateFlush)
                #expect(try await ask("the late event's flush committed") == count - Self.readingSeptember20)

                // Another process: a replay applies events (its position under `replay:`), then a rebuild.
                await ingest.noticeStoredChanges()
                try await store.write(FlushBatch(parts: [FlushBatch.Part(
                    topicPartition: TopicPartition(topic: "replay:cache-test", partition: 0), generation: 0, expectedOffset: nil,
                    newOffset: 1, delta: InternedDelta(events: [Self.play(Self.artist, on: CivilDate(year: 2026, month: 10, day: 6), "r1")]))]))
                await ingest.noticeStoredChanges()
                #expect(try await ask("a replay by another process") == 0)
                try await install()
                #expect(try await ask("the days loaded again") == 0)
                #expect(try await ask("after it") == count)
                try await store.client.query("INSERT INTO rebuilds (from_day, to_day, events) VALUES (date '2026-10-01', date '2026-10-01', 0)", logger: RouteTests.logger)
                await ingest.noticeStoredChanges()
                try await install()
                #expect(try await ask("a rebuild by another process") == 0)

                try await store.client.query("INSERT INTO retention_horizons (table_name, kept_from) VALUES ('cache_test', date '2026-01-01') ON CONFLICT DO NOTHING", logger: RouteTests.logger)
                await ingest.noticeStoredChanges()
                #expect(try await ask("retention dropped stored numbers") == 0)

                ingest.own([Self.partition], stored: [Self.partition: offset])
                await ingest.state.settled()
                try await install()
                #expect(try await ask("a change of ownership") == 0)
                #expect(try await ask("after it") == count)

                clock.withLock { $0 = Timestamp(seconds: $0.seconds + 86_400) }
                #expect(try await ask("a new day") == 0)
                #expect(try await ask("after it") == count)
            }
        }
    }

    /// Without memory (`--memory-days 0`), answers are kept by the changes every writer announces at its commit
    /// (`StoredChangeListener`): a flush of the artist's events retires them, another artist's does not, a rebuild
    /// retires all of them; while the announcements are not heard (the listening connection lost), nothing is kept.
    /// Answers with and without the cache are always equal.
    @Test func postgresAloneKeepsAnswersUntilAChangeOfTheArtistIsAnnounced() async throws {
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            // Listening again 3 s after losing its connection: the asks in between run while it does not listen.
            let listener = StoredChangeListener(store: store, logger: RouteTests.logger, retryDelay: .seconds(3))
            let listening = Task { try await listener.run() }
            defer { listening.cancel() }
            let read = CivilDate(year: 2026, month: 8, day: 1).daysSinceEpoch..<Self.today
            try await Self.waitUntil("listening") { listener.stamps(of: Self.artist, days: read) != nil }
            let now: @Sendable () -> Timestamp = { Timestamp(seconds: Self.today * 86_400 + 3_600) }
            try await Self.withAndWithoutCache(store: store, ingest: nil, storedChanges: listener, clock: now) { ask in
                var offset = Int64(RouteTests.events().count)
                /// Writes `events` as a flush of another instance would, and waits until its announcement is heard.
                func flush(_ events: [Event], of artist: String) async throws {
                    let all = Int64.min..<Int64.max
                    let before = listener.stamps(of: artist, days: all)
                    try await store.write(FlushBatch(parts: [FlushBatch.Part(
                        topicPartition: TopicPartition(topic: "streams", partition: 0), generation: 0, expectedOffset: offset,
                        newOffset: offset + Int64(events.count), delta: InternedDelta(events: events))]))
                    offset += Int64(events.count)
                    try await Self.waitUntil("the flush announced") { listener.stamps(of: artist, days: all) != before }
                }
                func play(_ artist: String, _ id: String, on day: Int = 5) -> Event {
                    .stream(StreamEvent(eventID: id, occurredAt: Timestamp(seconds: CivilDate(year: 2026, month: 10, day: day).daysSinceEpoch * 86_400 + 7_200),
                                        artistID: artist, trackID: "track-x", platform: "spotify", listenerID: "listener-\(id)"))
                }
                let other = (1...50).map { "artist-other-\($0)" }.first { ArtistDays([$0], .streams, days: 0...0) != ArtistDays([Self.artist], .streams, days: 0...0) }!
                let count = Self.uris.count

                #expect(try await ask("first") == 0)
                #expect(try await ask("nothing changed") == count)
                try await flush([play(Self.artist, "p1")], of: Self.artist)
                #expect(try await ask("a flush of the artist's event") == count - Self.readingStreams)
                #expect(try await ask("after it") == count)
                try await flush([play(other, "p2")], of: other)
                #expect(try await ask("another artist's flush") == count)
                try await flush([play(Self.artist, "p3", on: 12)], of: Self.artist)
                #expect(try await ask("the artist's event of today, which no answer reads") == count)
                try await flush([play(Self.artist, "p4", on: 11)], of: Self.artist)
                #expect(try await ask("the artist's event of yesterday") == count - Self.readingOctober11)

                let beforeRebuild = listener.stamps(of: Self.artist, days: read)
                let day = CivilDate(year: 2026, month: 10, day: 7).daysSinceEpoch
                try await store.rebuild(fromDay: day, toDay: day) { _ in (InternedDelta(), 0) }
                try await Self.waitUntil("the rebuild announced") { listener.stamps(of: Self.artist, days: read) != beforeRebuild }
                #expect(try await ask("a rebuild") == 0)
                #expect(try await ask("after it") == count)

                // The listening connection lost: nothing is kept until it listens again, and all is retired then.
                try await store.client.query("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()
                    """, logger: RouteTests.logger)
                try await Self.waitUntil("the loss noticed") { listener.stamps(of: Self.artist, days: read) == nil }
                #expect(try await ask("not listening") == 0)
                #expect(try await ask("still not listening") == 0)
                try await Self.waitUntil("listening again") { listener.stamps(of: Self.artist, days: read) != nil }
                #expect(try await ask("listening again") == 0)
                #expect(try await ask("after it") == count)
            }
        }
    }

    /// Without memory, what an answer reads of the days before the artist's last three is kept
    /// (`QueryService.Reads.freshFrom`): after the artist's play of yesterday is announced, the answer is made again
    /// reading those days alone, the rest found kept, in as many statements as before (streams: one; top tracks: its
    /// rows and its listeners, in a snapshot); after a play of an earlier day, that part is read again (in the same
    /// statements). The answers equal those of a router that keeps nothing.
    @Test func postgresAloneReadsOnlyTheFreshDaysAfterYesterdayChanged() async throws {
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            let listener = StoredChangeListener(store: store, logger: RouteTests.logger, retryDelay: .seconds(3))
            let listening = Task { try await listener.run() }
            defer { listening.cancel() }
            let all = Int64.min..<Int64.max
            try await Self.waitUntil("listening") { listener.stamps(of: Self.artist, days: all) != nil }
            let now: @Sendable () -> Timestamp = { Timestamp(seconds: Self.today * 86_400 + 3_600) }
            let metrics = ServiceMetrics()
            /// Parts of the days before yesterday found kept (`backbeat_stored_part_lookups_total`).
            @Sendable func partsFound() -> Int {
                let prefix = #"backbeat_stored_part_lookups_total{outcome="hit"} "#
                let line = String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(prefix) }
                return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
            }
            let keeping = Application(router: buildRouter(
                store: store, ingest: nil, metrics: metrics, adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0,
                answerCache: AnswerCache(bytes: 1 << 20, metrics: nil), storedChanges: listener, clock: now))
            let plain = Application(router: buildRouter(
                store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0,
                answerCache: nil, clock: now))
            let streams = "/v1/artists/\(Self.artist)/streams?from=2026-09-14&to=2026-10-12&granularity=day"
            let top = "/v1/artists/\(Self.artist)/tracks/top?from=2026-09-14&to=2026-10-12"
            let headers: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
            try await DocumentedResponses.test(keeping) { keeping in
                try await DocumentedResponses.test(plain) { plain in
                    /// The statements each answer sent (BEGIN and COMMIT counted), each checked against the plain router's.
                    func ask() async throws -> [Int] {
                        var statements: [Int] = []
                        for uri in [streams, top] {
                            let before = store.queryStatementCount
                            let answer = try await keeping.execute(uri: uri, method: .get, headers: headers) { String(buffer: $0.body) }
                            statements.append(store.queryStatementCount - before)
                            let fresh = try await plain.execute(uri: uri, method: .get, headers: headers) { String(buffer: $0.body) }
                            #expect(Self.canonical(answer) == Self.canonical(fresh), "\(uri) differs from the answer made whole")
                        }
                        return statements
                    }
                    // Plays of a track already among the ten: the tracks whose listeners are read stay the same.
                    let ranked = try await plain.execute(uri: top, method: .get, headers: headers) { response in
                        try JSONDecoder().decode(TopTracksResponse.self, from: Data(buffer: response.body))
                    }
                    let track = try #require(ranked.tracks.first?.track_id)
                    var offset = Int64(RouteTests.events().count)
                    func flush(_ day: Int, _ id: String) async throws {
                        let before = listener.stamps(of: Self.artist, days: all)
                        try await store.write(FlushBatch(parts: [FlushBatch.Part(
                            topicPartition: TopicPartition(topic: "streams", partition: 0), generation: 0, expectedOffset: offset,
                            newOffset: offset + 1, delta: InternedDelta(events: [.stream(StreamEvent(
                                eventID: id, occurredAt: Timestamp(seconds: CivilDate(year: 2026, month: 10, day: day).daysSinceEpoch * 86_400 + 7_200),
                                artistID: Self.artist, trackID: track, platform: "spotify", listenerID: "listener-\(id)"))]))]))
                        offset += 1
                        try await Self.waitUntil("the flush announced") { listener.stamps(of: Self.artist, days: all) != before }
                    }
                    #expect(try await ask() == [1, 4], "the older days read with the rest")
                    #expect(partsFound() == 0)
                    #expect(try await ask() == [0, 0], "both answers kept")
                    try await flush(11, "y1")
                    #expect(try await ask() == [1, 4], "the last days read afresh")
                    // Streams: its rows' part and its listeners'; top tracks: its rows' part and its listeners'.
                    #expect(partsFound() == 4, "the older parts found kept")
                    try await flush(5, "l1")
                    #expect(try await ask() == [1, 4], "an earlier day's change: its part read again with the rest")
                    #expect(partsFound() == 4, "nothing found kept")
                }
            }
        }
    }

    /// Consumes `events` and flushes them on `partition` from `offset` on: to PostgreSQL and through the layers, as
    /// the ingest does.
    static func flush(_ events: [Event], ingest: IngestService, offset: inout Int64) async throws {
        ingest.consume(events, on: Self.partition, from: offset)
        offset += Int64(events.count)
        try await ingest.flushAll()
    }

    /// An ingest whose memory holds every partition and the stored days from 2026-10-01 (the horizon) on.
    static func ingestHoldingOctober(_ store: Store) async throws -> IngestService {
        let ingest = IngestService(
            configuration: IngestConfiguration(brokers: "unused", memory: MemoryConfiguration(retentionDays: 35)), store: store,
            logger: RouteTests.logger)
        ingest.own([Self.partition])
        let installed = try await ingest.installSnapshot(fromDay: CivilDate(year: 2026, month: 10, day: 1).daysSinceEpoch, owned: [Self.partition])
        #expect(installed)
        return ingest
    }

    /// A play of `artist` on `day`, by a listener of its own.
    static func play(_ artist: String, on day: CivilDate, _ id: String) -> Event {
        .stream(StreamEvent(eventID: id, occurredAt: Timestamp(seconds: day.daysSinceEpoch * 86_400 + 7_200),
                            artistID: artist, trackID: "track-x", platform: "spotify", listenerID: "listener-\(id)"))
    }

    /// What an answer from memory reads from PostgreSQL (the months before the horizon) is kept: made again after
    /// the artist's events of yesterday, it asks PostgreSQL nothing and counts them; after a late event of a day in
    /// those months it reads them again. Its answers equal those of a router that keeps nothing.
    @Test func theMonthsAnAnswerReadsFromPostgresAreKeptAcrossRecentChanges() async throws {
        try await Self.withKeepingAndPlain { store, ingest, keeping, plain in
            let year = "/v1/artists/\(Self.artist)/streams?from=2026-08-01&to=2026-10-12&granularity=month"
            let headers: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
            /// The answer kept or made, the statements it sent, and the answer of the router keeping nothing.
            func ask() async throws -> (answer: String, statements: Int, plain: String) {
                let before = store.queryStatementCount
                let answer = try await keeping.execute(uri: year, method: .get, headers: headers) { String(buffer: $0.body) }
                let statements = store.queryStatementCount - before
                return (answer, statements, try await plain.execute(uri: year, method: .get, headers: headers) { String(buffer: $0.body) })
            }
            var offset: Int64 = 0
            let first = try await ask()
            #expect(first.statements > 0, "the months before the horizon are read once")
            #expect(first.answer == first.plain)

            try await Self.flush([Self.play(Self.artist, on: CivilDate(year: 2026, month: 10, day: 11), "y1")], ingest: ingest, offset: &offset)
            let afterYesterday = try await ask()
            #expect(afterYesterday.answer != first.answer, "the answer is made again with yesterday's play")
            #expect(afterYesterday.statements == 0, "made again without PostgreSQL: \(afterYesterday.statements) statements")
            #expect(afterYesterday.answer == afterYesterday.plain)

            try await Self.flush([Self.play(Self.artist, on: CivilDate(year: 2026, month: 9, day: 20), "l1")], ingest: ingest, offset: &offset)
            let afterLate = try await ask()
            #expect(afterLate.statements > 0, "a late event of September reads September again")
            #expect(afterLate.answer != afterYesterday.answer)
            #expect(afterLate.answer == afterLate.plain)
        }
    }

    /// Runs `body` with the in-process clients of two routers over one store and one memory holding October (the
    /// day `today`): one keeping answers, one not.
    static func withKeepingAndPlain(
        _ body: @Sendable (_ store: Store, _ ingest: IngestService, _ keeping: any TestClientProtocol, _ plain: any TestClientProtocol) async throws -> Void
    ) async throws {
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            let ingest = try await Self.ingestHoldingOctober(store)
            let now: @Sendable () -> Timestamp = { Timestamp(seconds: Self.today * 86_400 + 3_600) }
            let keeping = Application(router: buildRouter(
                store: store, ingest: ingest, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0,
                answerCache: AnswerCache(bytes: 1 << 20, metrics: nil), clock: now))
            let plain = Application(router: buildRouter(
                store: store, ingest: ingest, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0,
                answerCache: nil, clock: now))
            try await DocumentedResponses.test(keeping) { keeping in
                try await DocumentedResponses.test(plain) { plain in
                    try await body(store, ingest, keeping, plain)
                }
            }
        }
    }

    /// A kept answer of 4 KB or more is sent as its zstd frame (`Content-Encoding: zstd`) to a client that accepts
    /// zstd, from the first request on (the request that makes it is answered as it is kept), and as JSON to any other;
    /// decoded by libzstd on its own, it is the answer of a router that keeps nothing. A small answer is JSON to all.
    @Test func aLargeKeptAnswerIsSentAsItsZstdFrameToAClientThatAcceptsIt() async throws {
        try await Self.withKeepingAndPlain { _, _, keeping, plain in
            let social = "/v1/artists/\(Self.artist)/social?from=2026-10-01&to=2026-10-11&granularity=day"
            let platforms = "/v1/artists/\(Self.artist)/platforms?from=2026-10-01&to=2026-10-11"
            func get(_ client: some TestClientProtocol, _ uri: String, accepting: String?) async throws -> (HTTPFields, ByteBuffer) {
                var headers: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
                if let accepting { headers[.acceptEncoding] = accepting }
                return try await client.execute(uri: uri, method: .get, headers: headers) {
                    #expect($0.status == .ok, "\(uri): \(String(buffer: $0.body).prefix(200))")
                    return ($0.headers, $0.body)
                }
            }
            let expected = try await get(plain, social, accepting: "zstd").1
            #expect(expected.readableBytes >= AnswerBody.compressingFrom, "the social series is large: \(expected.readableBytes) bytes")
            for accepting in ["gzip, deflate, br, zstd", "zstd"] {
                for request in 1...2 {
                    let (headers, body) = try await get(keeping, social, accepting: accepting)
                    #expect(headers[.contentEncoding] == "zstd", "request \(request) accepting \(accepting)")
                    #expect(headers[.vary] == "Accept-Encoding")
                    #expect(headers[.contentLength] == String(body.readableBytes))
                    #expect(body.readableBytes < expected.readableBytes / 2, "\(body.readableBytes) bytes")
                    #expect(zstdDecoded(body) == expected, "request \(request) accepting \(accepting)")
                }
            }
            for accepting in [nil, "gzip, deflate, br", "zstd;q=0", "*;q=0"] {
                let (headers, body) = try await get(keeping, social, accepting: accepting)
                #expect(headers[.contentEncoding] == nil, "accepting \(accepting ?? "nothing")")
                #expect(headers[.vary] == "Accept-Encoding")
                #expect(body == expected, "accepting \(accepting ?? "nothing")")
            }
            let small = try await get(plain, platforms, accepting: nil).1
            for _ in 1...2 {
                let (headers, body) = try await get(keeping, platforms, accepting: "zstd")
                #expect(headers[.contentEncoding] == nil && body == small, "a small answer is sent as it is")
            }
        }
    }

    /// Runs `body` with `ask`, which asks every endpoint of two routers over `store` and `ingest`, one keeping answers
    /// (by `storedChanges` when there is no memory) and one not, expects their answers equal, and answers how many the
    /// cache answered.
    static func withAndWithoutCache(
        store: Store, ingest: IngestService?, storedChanges: StoredChangeListener? = nil, clock: @escaping @Sendable () -> Timestamp,
        _ body: @Sendable (_ ask: @Sendable (String) async throws -> Int) async throws -> Void
    ) async throws {
        let cache = try #require(AnswerCache(bytes: 1 << 20, metrics: nil))
        let cached = Application(router: buildRouter(store: store, ingest: ingest, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken,
                                 artistRequestsPerSecond: 0, answerCache: cache, storedChanges: storedChanges, clock: clock))
        let uncached = Application(router: buildRouter(store: store, ingest: ingest, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken,
                                   artistRequestsPerSecond: 0, answerCache: nil, clock: clock))
        try await DocumentedResponses.test(cached) { withCache in
            try await DocumentedResponses.test(uncached) { withoutCache in
                try await body { change in
                    let hitsBefore = cache.statistics.hits
                    for uri in uris {
                        let headers: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
                        let kept = try await withCache.execute(uri: uri, method: .get, headers: headers) { ($0.status, String(buffer: $0.body)) }
                        let fresh = try await withoutCache.execute(uri: uri, method: .get, headers: headers) { ($0.status, String(buffer: $0.body)) }
                        #expect(kept.0 == .ok && fresh.0 == .ok, "\(change): \(uri): \(kept.1.prefix(200))")
                        #expect(canonical(kept.1) == canonical(fresh.1), "\(change): \(uri) differs with the cache")
                    }
                    return cache.statistics.hits - hitsBefore
                }
            }
        }
    }

    /// Waits (up to 10 s) until `condition` holds.
    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<1_000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }

    /// Each request is planned once (what memory holds, whether to forward), and an answer memory holds whole makes
    /// no PostgreSQL statement at all; one that reaches before the horizon does.
    @Test func aMemoryAnswerIsPlannedOnceAndAsksPostgresNothing() async throws {
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            let ingest = try await Self.ingestHoldingOctober(store)
            let plans = SharedCount()
            let app = Application(router: buildRouter(
                store: store, ingest: ingest, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0,
                answerCache: nil, clock: { Timestamp(seconds: Self.today * 86_400) }, plansMade: plans))
            try await DocumentedResponses.test(app) { client in
                let headers: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
                var asked = 0
                for uri in Self.uris {
                    let statements = store.queryStatementCount
                    let status = try await client.execute(uri: uri, method: .get, headers: headers) { $0.status }
                    asked += 1
                    #expect(status == .ok, "\(uri)")
                    #expect(plans.value == asked, "\(uri): planned \(plans.value - asked + 1) times")
                    let sent = store.queryStatementCount - statements
                    if uri.contains("summary") || uri.contains("2026-08-01") {
                        #expect(sent > 0, "\(uri) reads days before the horizon from PostgreSQL")
                    } else {
                        #expect(sent == 0, "\(uri) is answered from memory alone: \(sent) statements")
                    }
                }
            }
        }
    }

    /// From PostgreSQL alone, an answer made of one read sends that one statement and no database snapshot: so do
    /// those whose reads come in one statement (streams and page: the series with its listeners or visitors;
    /// demographics: ages and genders with countries; page sections: its three lists; the summary: three queries and
    /// the listeners). One whose second read depends on the first (top tracks' listeners of the tracks ranked, page
    /// sources' visitors of the sources) sends both inside a snapshot (BEGIN and COMMIT besides). A body said to read
    /// once that reads twice is made again inside a snapshot, and answers the same.
    @Test func anAnswerOfOneReadSendsOneStatement() async throws {
        try await RouteTests.withPopulatedStore(RouteTests.events()) { store, _ in
            let app = Application(router: buildRouter(
                store: store, ingest: nil, metrics: ServiceMetrics(), adminToken: RouteTests.adminToken, artistRequestsPerSecond: 0,
                answerCache: nil, clock: { Timestamp(seconds: Self.today * 86_400) }))
            try await DocumentedResponses.test(app) { client in
                let headers: HTTPFields = [.authorization: "Bearer \(RouteTests.adminToken)"]
                for (route, query) in RouteTests.artistRoutes {
                    let before = store.queryStatementCount
                    let status = try await client.execute(uri: "/v1/artists/\(Self.artist)/\(route)?\(query)", method: .get, headers: headers) { $0.status }
                    #expect(status == .ok)
                    let sent = store.queryStatementCount - before
                    let expected = ["tracks/top", "page/sources"].contains(route) ? 2 + 2 : 1
                    #expect(sent == expected, "\(route): \(sent) statements")
                }
            }
            let queries = QueryService(store: store, memory: nil, artistPartitions: nil, cache: nil)
            var builder = QueryBuilder()
            builder.dataset = "streams"
            builder.from = "2026-10-01"
            builder.to = "2026-10-11"
            builder.granularity = "day"
            builder.filters = [("artist_id", [Self.artist])]
            let query = try builder.build()
            let plan = try await queries.plan(for: query)
            let twoReads: @Sendable (QueryService.Reads) async throws -> ByteBuffer = { reads in
                ByteBuffer(string: "\(try await reads.answer(query)) \(try await reads.listenersPerPeriodAndInAll(try #require(ListenerScope(query)), granularity: .day).perPeriod.sorted { $0.key! < $1.key! })")
            }
            let before = store.queryStatementCount
            let saidOnce = try await queries.answer(key: nil, over: query.interval, plan: plan, oneStatement: true, twoReads).plain
            #expect(store.queryStatementCount - before == 1 + 4, "one statement, then the answer made again in a snapshot")
            #expect(saidOnce == (try await queries.answer(key: nil, over: query.interval, plan: plan, twoReads).plain))
        }
    }

    /// An answer is kept under the families its making read, whatever the request found of the others: a change of
    /// another family leaves it kept, a change of one it read retires it, and a request that finds the other families
    /// moved since the making still gets it.
    @Test func anAnswerIsKeptUnderTheFamiliesItsMakingRead() async throws {
        let cache = try #require(AnswerCache(bytes: 1 << 20, metrics: nil))
        var versions = ArtistVersions()
        func validity() -> AnswerCache.Validity { AnswerCache.Validity(stamps: versions.stamps(of: "a", days: 0..<7), days: 0..<7, day: 1) }
        func change(_ families: ArtistVersions.Families) { versions.changed(ArtistDays(["a"], families, days: 3...3)) }
        let makes = Count()
        func ask() async throws -> String? {
            try await cache.answer("revenue and social", validity()) {
                let made = makes.value.add(1, ordering: .relaxed).newValue
                return (ByteBuffer(string: "made \(made)"), [.revenue, .social])
            }.plain.map { String(buffer: $0) }
        }
        #expect(try await ask() == "made 1")
        change(.streams)
        change(.page)
        #expect(try await ask() == "made 1", "streams and page changed: not read")
        change(.social)
        #expect(try await ask() == "made 2", "social changed: read")
        change([.streams, .page])
        #expect(try await ask() == "made 2")
        change(.revenue)
        #expect(try await ask() == "made 3", "revenue changed: read")
        versions.changedEverything()
        #expect(try await ask() == "made 4", "everything changed")
        #expect(makes.value.load(ordering: .relaxed) == 4)
    }

    /// Large answers are kept compressed: 100 answers of some 100 KB of series JSON, each different, fit a cache of
    /// 1 MB, and each comes back byte for byte without being made again; a small answer is kept as it is.
    @Test func largeAnswersAreKeptCompressedAndServedByteForByte() async throws {
        let cache = try #require(AnswerCache(bytes: 1 << 20, metrics: nil))
        let validity = AnswerCache.Validity(stamps: MemoryLayers().stamps(of: "a", days: 0..<1), days: 0..<1, day: 1)
        func series(_ seed: Int) -> ByteBuffer {
            var text = "{\"series\":["
            for point in 0..<1_120 {
                let count = (point * 7 + seed * 13) % 23
                text += "{\"period_start\":\"2026-10-\(10 + point % 28)T00:00:00Z\",\"platform\":\"p\(point % 5)\",\"action\":\"a\(point % 8)\",\"count\":\(count)},"
            }
            return ByteBuffer(string: text + "{}]}")
        }
        let makes = Count()
        func ask(_ seed: Int) async throws -> ByteBuffer? {
            try await cache.answer("answer-\(seed)", validity) {
                makes.value.add(1, ordering: .relaxed)
                return (series(seed), .streams)
            }.plain
        }
        #expect(series(0).readableBytes > 90_000)
        for seed in 0..<100 { _ = try await ask(seed) }
        #expect(makes.value.load(ordering: .relaxed) == 100)
        #expect(cache.bytesKept < 1 << 20, "\(cache.bytesKept) bytes")
        for seed in 0..<100 {
            #expect(try await ask(seed) == series(seed), "answer \(seed) comes back as made")
        }
        #expect(makes.value.load(ordering: .relaxed) == 100, "every answer was kept")

        let small = ByteBuffer(string: "{\"platforms\":[]}")
        let before = cache.bytesKept
        _ = try await cache.answer("small", validity) { (small, .streams) }
        #expect(try await cache.answer("small", validity) { (ByteBuffer(), .streams) }.plain == small)
        #expect(cache.bytesKept - before >= small.readableBytes, "a small answer is kept as it is")
    }

    /// A burst of requests for one answer makes it once, and the others are handed it; when the making fails, each
    /// waiting request makes it itself.
    @Test func aBurstForOneAnswerMakesItOnce() async throws {
        let cache = try #require(AnswerCache(bytes: 1 << 20, metrics: nil))
        let validity = AnswerCache.Validity(stamps: MemoryLayers().stamps(of: "a", days: 0..<1), days: 0..<1, day: 1)
        let makes = Count()
        func burst(failing: Bool) async throws -> [String] {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        do {
                            let body = try await cache.answer("key-\(failing)", validity) {
                                let made = makes.value.add(1, ordering: .relaxed).newValue
                                try await Task.sleep(for: .milliseconds(100))
                                if failing && made == 1 { throw CancellationError() }
                                return (ByteBuffer(string: "answer"), .streams)
                            }
                            return body.plain.map { String(buffer: $0) } ?? "undecodable"
                        } catch {
                            return "failed"
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let answers = try await burst(failing: false)
        #expect(answers == Array(repeating: "answer", count: 20))
        #expect(makes.value.load(ordering: .relaxed) == 1)
        #expect(cache.statistics.shared >= 1)
        makes.value.store(0, ordering: .relaxed)
        let afterFailure = try await burst(failing: true)
        #expect(afterFailure.filter { $0 == "failed" }.count == 1, "only the failed making's own request fails")
        #expect(afterFailure.filter { $0 == "answer" }.count == 19)
    }

    /// The artist changes while an answer is made: the burst of requests that follows, under the new validity, shares
    /// one making of its own (not one each beside the older making), and gets the answer made under its validity.
    @Test func aBurstUnderANewValidityMakesItOnceWhileTheOldMakingRuns() async throws {
        let cache = try #require(AnswerCache(bytes: 1 << 20, metrics: nil))
        let stamps = MemoryLayers().stamps(of: "a", days: 0..<1)
        let old = AnswerCache.Validity(stamps: stamps, days: 0..<1, day: 1), new = AnswerCache.Validity(stamps: stamps, days: 0..<1, day: 2)
        let makes = Count()
        let started = Count()
        async let first = cache.answer("key", old) {
            makes.value.add(1, ordering: .relaxed)
            started.value.store(1, ordering: .relaxed)
            try await Task.sleep(for: .milliseconds(300))
            return (ByteBuffer(string: "old"), nil)
        }
        try await Self.waitUntil("the old making started") { started.value.load(ordering: .relaxed) == 1 }
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let body = try await cache.answer("key", new) {
                        makes.value.add(1, ordering: .relaxed)
                        try await Task.sleep(for: .milliseconds(100))
                        return (ByteBuffer(string: "new"), .streams)
                    }
                    return body.plain.map { String(buffer: $0) } ?? "undecodable"
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == Array(repeating: "new", count: 20))
        #expect(try await first.plain.map { String(buffer: $0) } == "old")
        #expect(makes.value.load(ordering: .relaxed) == 2, "one making per validity")
        #expect(try await cache.answer("key", new) { (ByteBuffer(string: "again"), .streams) }.plain.map { String(buffer: $0) } == "new",
                "the new answer was kept")
    }

    /// JSON with sorted keys: member order may differ between two encodings of one answer.
    static func canonical(_ body: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    final class Count: Sendable {
        let value = Atomic<Int>(0)
    }
}
