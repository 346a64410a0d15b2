/// Deterministic synthetic events of every family, for demos, tests and benchmarks.
///
/// The same configuration always yields the same sequence. Popularity is skewed (Zipf-like): the first artists
/// and tracks get most of the plays, as on a real platform.
public struct EventGenerator: Sendable {
    /// What to generate.
    public struct Configuration: Sendable {
        public var seed: UInt64
        public var artists: Int
        public var days: Int
        /// The first day events fall on (UTC).
        public var start: CivilDate
        /// Fraction (0...1) of messages made invalid on purpose.
        public var invalidFraction: Double
        public var tracksPerArtist: Int
        /// Fraction (0...1) of messages that resend one of the last `resendDistance` messages (the same bytes, as
        /// a producer's retry sends them), to exercise dedup.
        public var resendFraction: Double
        /// Fraction (0...1) of valid events that are page events; the rest are streams, revenue and social events
        /// (8:1:1). At 0 no page event is made and the sequence is the one made before page events existed.
        public var pageFraction: Double

        public init(
            seed: UInt64 = 1, artists: Int = 50, days: Int = 30, start: CivilDate, invalidFraction: Double = 0, tracksPerArtist: Int = 20,
            resendFraction: Double = 0, pageFraction: Double = 0
        ) {
            self.resendFraction = resendFraction
            self.pageFraction = pageFraction
            self.seed = seed
            self.artists = max(1, artists)
            self.days = max(1, days)
            self.start = start
            self.invalidFraction = invalidFraction
            self.tracksPerArtist = max(1, tracksPerArtist)
        }
    }

    /// One generated message: where it goes, its key and value, and the event it encodes (nil when invalid).
    public struct Message: Sendable {
        public var topic: EventType
        public var key: String
        public var value: [UInt8]?
        public var event: Event?

        public init(topic: EventType, key: String, value: [UInt8]?, event: Event?) {
            self.topic = topic
            self.key = key
            self.value = value
            self.event = event
        }
    }

    public let configuration: Configuration
    private var random: SplitMix64
    private var sequence: UInt64 = 0
    private let artistWeights: ZipfTable
    private let trackWeights: ZipfTable
    /// The last messages made, for resends (empty unless `resendFraction` > 0).
    private var recent: [Message] = []
    /// Each artist's page sessions begun lately (at most `openSessionsKept`): a page event continues one of them
    /// about half the time (`pageEvent`).
    private var openSessions: [String: [OpenSession]] = [:]
    private static let openSessionsKept = 16

    private struct OpenSession: Sendable {
        var visitor: String
        var session: String?
        var portfolio: String
        /// The second of its last event: the next comes up to 15 minutes after.
        var lastSecond: Int64
    }

    /// How far back a resend reaches: one of this many last messages.
    public static let resendDistance = 1000

    static let platforms = ["spotify", "apple_music", "youtube", "deezer", "tidal", "amazon_music"]
    static let countries = ["US", "GB", "DE", "FR", "BR", "MX", "JP", "SE", "NG", "IN"]
    static let socialPlatforms = ["instagram", "tiktok", "x", "youtube", "facebook"]
    static let actions = ["like", "comment", "share", "follow", "unfollow", "view", "save", "mention"]

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.random = SplitMix64(seed: configuration.seed)
        self.artistWeights = ZipfTable(count: configuration.artists)
        self.trackWeights = ZipfTable(count: configuration.tracksPerArtist)
    }

    /// The artist id of the artist numbered `index` (0-based).
    public static func artistID(_ index: Int) -> String {
        "artist-" + String(index + 1).leftPadded(to: 4)
    }

    /// Produces the next message: a new one, or (at `resendFraction`) a resend of a recent one.
    public mutating func next() -> Message {
        guard configuration.resendFraction > 0 else { return make() }
        if !recent.isEmpty && random.nextUnit() < configuration.resendFraction {
            return recent[Int(random.next(below: UInt64(recent.count)))]
        }
        let message = make()
        if recent.count < Self.resendDistance { recent.append(message) } else { recent[Int(sequence) % Self.resendDistance] = message }
        return message
    }

    private mutating func make() -> Message {
        sequence += 1
        let artist = Self.artistID(artistWeights.pick(random.nextUnit()))
        let start = configuration.start.daysSinceEpoch * 86_400
        let second = start + Int64(random.next(below: UInt64(configuration.days) * 86_400))
        let occurredAt = Timestamp(microseconds: second * 1_000_000 + Int64(random.next(below: 1000)) * 1000)
        let eventID = "ev-\(configuration.seed)-\(sequence)"
        if random.nextUnit() < configuration.invalidFraction {
            return invalidMessage(artist: artist, eventID: eventID, occurredAt: occurredAt)
        }
        let event: Event
        if configuration.pageFraction > 0, random.nextUnit() < configuration.pageFraction {
            event = .page(pageEvent(eventID: eventID, occurredAt: occurredAt, artist: artist))
        } else {
            event = familyEvent(eventID: eventID, occurredAt: occurredAt, artist: artist)
        }
        let json = EventEncoder.json(event, amountAsNumber: random.next(below: 2) == 0)
        return Message(topic: event.type, key: artist, value: Array(json.utf8), event: event)
    }

    /// A stream (80%), revenue (10%) or social (10%) event.
    private mutating func familyEvent(eventID: String, occurredAt: Timestamp, artist: String) -> Event {
        let roll = random.next(below: 100)
        let event: Event
        if roll < 80 {
            let trackIndex = trackWeights.pick(random.nextUnit())
            let duration: Int64? = random.next(below: 10) == 0 ? nil : Int64(random.next(below: 240_000))
            event = .stream(StreamEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artist,
                trackID: artist + ":track-" + String(trackIndex + 1).leftPadded(to: 2),
                platform: pick(Self.platforms),
                listenerID: "listener-\(random.next(below: 50_000))",
                country: random.next(below: 20) == 0 ? "ZZ" : pick(Self.countries),
                ageRange: pick(AgeRange.allCases),
                gender: pick(Gender.allCases),
                durationMs: duration
            ))
        } else if roll < 90 {
            let cents = Int128(random.next(below: 5_000_000)) + 1
            let refund = random.next(below: 50) == 0
            event = .revenue(RevenueEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artist, source: pick(RevenueSource.allCases),
                amount: Money(micros: (refund ? -cents : cents) * 7),
                currency: pick(["USD", "EUR", "GBP"]),
                platform: random.next(below: 2) == 0 ? pick(Self.platforms) : nil,
                trackID: nil
            ))
        } else {
            event = .social(SocialEvent(
                eventID: eventID, occurredAt: occurredAt, artistID: artist, platform: pick(Self.socialPlatforms),
                action: pick(Self.actions), count: Int64(random.next(below: 5)) + 1,
                postID: random.next(below: 2) == 0 ? "post-\(random.next(below: 1000))" : nil
            ))
        }
        return event
    }

    static let pageSections = ["hero", "releases", "videos", "tour", "merch", "about"]
    static let blockTypes = ["release", "video", "tour_dates", "merch_link"]
    static let blockActions = ["play", "expand", "swipe", "share"]
    static let ctaActions = ["pre_save", "buy_tickets", "follow", "shop"]
    static let referrers = ["instagram.com", "l.facebook.com", "t.co", "google.com", "open.spotify.com", "(direct)", "(unknown)"]

    /// A page event, in sessions of a visitor: about half begin a session (a portfolio view, or a section reached
    /// by a link), the others continue one of the artist's last sessions with the page again, a section, a block or,
    /// rarely, a call to action clicked, minutes after its last event; so most sessions bounce, some look around, a few click. A
    /// tenth have no session id.
    private mutating func pageEvent(eventID: String, occurredAt drawn: Timestamp, artist: String) -> PageEvent {
        let kind: PageEvent.Kind
        let open: OpenSession
        var occurredAt = drawn
        var sessions = openSessions[artist, default: []]
        if !sessions.isEmpty && random.next(below: 100) < 45 {
            let index = Int(random.next(below: UInt64(sessions.count)))
            let end = (configuration.start.daysSinceEpoch + Int64(configuration.days)) * 86_400
            let second = min(sessions[index].lastSecond + 1 + Int64(random.next(below: 900)), end - 1)
            occurredAt = Timestamp(microseconds: second * 1_000_000 + drawn.microseconds.floorMod(1_000_000))
            sessions[index].lastSecond = second
            openSessions[artist] = sessions
            open = sessions[index]
            let roll = random.next(below: 100)
            if roll < 12 {
                kind = .portfolioView(category: nil)
            } else if roll < 50 {
                kind = .sectionView(sectionID: pick(Self.pageSections))
            } else if roll < 84 {
                let block = random.next(below: 12)
                kind = .blockInteraction(blockID: "blk-\(block)", blockType: Self.blockTypes[Int(block) % Self.blockTypes.count], action: pick(Self.blockActions))
            } else {
                kind = .ctaClick(actionType: pick(Self.ctaActions))
            }
        } else {
            let visitor = "v-\(random.next(below: 20_000))"
            open = OpenSession(
                visitor: visitor, session: random.next(below: 10) == 0 ? nil : "s-\(visitor)-\(occurredAt.seconds / 1800)",
                portfolio: random.next(below: 4) == 0 ? "pf-tour" : "pf-main", lastSecond: drawn.seconds)
            kind = random.next(below: 100) < 85
                ? .portfolioView(category: random.next(below: 2) == 0 ? "music" : nil)
                : .sectionView(sectionID: pick(Self.pageSections))
            sessions.append(open)
            if sessions.count > Self.openSessionsKept { sessions.removeFirst() }
            openSessions[artist] = sessions
        }
        return PageEvent(
            eventID: eventID, occurredAt: occurredAt, artistID: artist, visitorID: open.visitor, portfolioID: open.portfolio, kind: kind,
            sessionID: open.session, country: random.next(below: 20) == 0 ? "ZZ" : pick(Self.countries), referrer: pick(Self.referrers),
            properties: random.next(below: 3) == 0 ? [PageEvent.Property("utm_source", pick(["newsletter", "ig_bio", "ad"]))] : [])
    }

    private mutating func invalidMessage(artist: String, eventID: String, occurredAt: Timestamp) -> Message {
        let valid = EventEncoder.json(.social(SocialEvent(eventID: eventID, occurredAt: occurredAt, artistID: artist, platform: "tiktok", action: "like")), amountAsNumber: false)
        let value: [UInt8]?
        switch random.next(below: 8) {
        case 0: value = Array(valid.utf8.dropLast(3))  // truncated
        case 1: value = nil  // tombstone
        case 2: value = Array("[1,2,3]".utf8)
        case 3: value = Array(valid.replacingFirst("\"platform\":\"tiktok\"", with: "\"platform\":\"TikTok\"").utf8)
        case 4: value = Array(valid.replacingFirst("\"type\":\"social\"", with: "\"type\":\"podcast\"").utf8)
        case 5: value = Array(valid.replacingFirst("\"occurred_at\":\"", with: "\"occurred_at\":\"yesterday").utf8)
        case 6: value = Array(valid.replacingFirst(",\"count\":1", with: ",\"count\":0").utf8)
        default: value = [0xFF, 0xFE, 0x7B]  // not UTF-8
        }
        return Message(topic: .social, key: artist, value: value, event: nil)
    }

    private mutating func pick<T>(_ values: [T]) -> T {
        values[Int(random.next(below: UInt64(values.count)))]
    }
}

extension Event {
    /// The family of the event.
    public var type: EventType {
        switch self {
        case .stream: .stream
        case .revenue: .revenue
        case .social: .social
        case .page: .page
        }
    }
}

/// A small, fast, seedable PRNG (SplitMix64).
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(below bound: UInt64) -> UInt64 {
        next() % bound
    }

    /// A value in [0, 1).
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

/// Cumulative Zipf weights (1/rank) for picking skewed indexes.
struct ZipfTable: Sendable {
    private let cumulative: [Double]

    init(count: Int) {
        var total = 0.0
        var cumulative: [Double] = []
        for rank in 1...count {
            total += 1 / Double(rank)
            cumulative.append(total)
        }
        self.cumulative = cumulative.map { $0 / total }
    }

    func pick(_ unit: Double) -> Int {
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] > unit { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
