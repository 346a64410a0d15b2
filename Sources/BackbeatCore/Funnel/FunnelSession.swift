/// One session's way through an artist's page funnel (docs/events.md, "The page funnel"): the instants (seconds since
/// the epoch) of its first event of any page type and of its first portfolio view, section view and CTA click.
///
/// Each member is a minimum, so that two states of one session merge by taking the minima (`formUnion`) whatever
/// order their events came in, and adding an event twice changes nothing: what the session counts
/// (`counted`) is a function of the state alone. A session lasts `window` from its first event: a step after that is
/// not part of it.
public struct FunnelSession: Equatable, Sendable {
    /// How long a session lasts from its first event: 24 hours.
    public static let window: Int64 = 86_400

    /// The step of the funnel an event is (`other`: a block interaction, which only starts a session).
    public enum Step: Sendable {
        case view, section, click, other
    }

    public private(set) var start: Int64
    public private(set) var firstView: Int64?
    public private(set) var firstSection: Int64?
    public private(set) var firstClick: Int64?

    public init(start: Int64, firstView: Int64?, firstSection: Int64?, firstClick: Int64?) {
        self.start = start
        self.firstView = firstView
        self.firstSection = firstSection
        self.firstClick = firstClick
    }

    /// The state of a session that has one event: `step` at `instant`.
    public init(_ step: Step, at instant: Int64) {
        start = instant
        switch step {
        case .view: firstView = instant
        case .section: firstSection = instant
        case .click: firstClick = instant
        case .other: break
        }
    }

    /// Adds the events of `other`, a state of the same session.
    public mutating func formUnion(_ other: FunnelSession) {
        start = min(start, other.start)
        firstView = Self.earlier(firstView, other.firstView)
        firstSection = Self.earlier(firstSection, other.firstSection)
        firstClick = Self.earlier(firstClick, other.firstClick)
    }

    /// What the session counts: nothing until a portfolio view falls in its window; then one session on the instant
    /// of its first view, with a section view and with a CTA click (each as well, a funnel's stages) when one falls
    /// in its window too, in any order.
    public var counted: (at: Int64, counts: FunnelCounts)? {
        let end = start + Self.window
        guard let view = firstView, view < end else { return nil }
        let sectioned = firstSection.map { $0 < end } ?? false
        let clicked = sectioned && (firstClick.map { $0 < end } ?? false)
        return (view, FunnelCounts(sessions: 1, withSection: sectioned ? 1 : 0, withClick: clicked ? 1 : 0))
    }

    /// The part of this state that its events at the instants `isCounted` rejects make, given that all of its events
    /// made it (nil: none of them): merged with a state made of its other events, it gives this state back. A rebuild
    /// of some days counts the events on them again and keeps the rest of a session as stored.
    public func excluding(_ isCounted: (Int64) -> Bool) -> FunnelSession? {
        func kept(_ instant: Int64?) -> Int64? { instant.flatMap { isCounted($0) ? nil : $0 } }
        let view = kept(firstView), section = kept(firstSection), click = kept(firstClick)
        // When the first event is among the counted ones, the counted part brings it back: any kept instant will do.
        guard let start = kept(start) ?? [view, section, click].compactMap({ $0 }).min() else { return nil }
        return FunnelSession(start: start, firstView: view, firstSection: section, firstClick: click)
    }

    private static func earlier(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }
}

/// Sessions counted at each stage of the page funnel: with a portfolio view; of those, with a section view; of
/// those, with a CTA click. A change of a session's state is counted as its new counts less its old ones, so that
/// counts can be negative in a change, never in a sum.
public struct FunnelCounts: Equatable, Sendable {
    public var sessions: Int64
    public var withSection: Int64
    public var withClick: Int64

    public init(sessions: Int64 = 0, withSection: Int64 = 0, withClick: Int64 = 0) {
        self.sessions = sessions
        self.withSection = withSection
        self.withClick = withClick
    }

    public static func += (lhs: inout FunnelCounts, rhs: FunnelCounts) {
        lhs.sessions += rhs.sessions
        lhs.withSection += rhs.withSection
        lhs.withClick += rhs.withClick
    }

    public static func + (lhs: FunnelCounts, rhs: FunnelCounts) -> FunnelCounts {
        var sum = lhs
        sum += rhs
        return sum
    }

    public static prefix func - (counts: FunnelCounts) -> FunnelCounts {
        FunnelCounts(sessions: -counts.sessions, withSection: -counts.withSection, withClick: -counts.withClick)
    }

    public var isZero: Bool { sessions == 0 && withSection == 0 && withClick == 0 }
}

extension EventRecord.PageDetails.Kind {
    /// The funnel step an event of this kind is.
    var funnelStep: FunnelSession.Step {
        switch self {
        case .portfolioView: .view
        case .sectionView: .section
        case .ctaClick: .click
        case .blockInteraction: .other
        }
    }
}

extension FunnelSession {
    /// What a session adds to the funnel when its state goes from `old` (nil: none stored) to `new`: its new counts
    /// on the instant of its new first view, less its old counts on the old one's (none when what it counts is the same).
    public static func changes(from old: FunnelSession?, to new: FunnelSession) -> [(at: Int64, counts: FunnelCounts)] {
        let before = old?.counted, after = new.counted
        if let before, let after, before.at == after.at {
            return before.counts == after.counts ? [] : [(after.at, after.counts + -before.counts)]
        }
        return (before.map { [($0.at, -$0.counts)] } ?? []) + (after.map { [($0.at, $0.counts)] } ?? [])
    }
}
