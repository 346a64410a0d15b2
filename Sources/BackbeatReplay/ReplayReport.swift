import BackbeatCore

/// What one input's replay did.
public struct ReplayReport: Sendable {
    /// What an input turned out to be.
    public enum Kind: Sendable {
        case unknown
        /// Plain event NDJSON, named by its content.
        case plain(identity: String)
        /// An archive of consumed messages, applied against stored offsets.
        case archive
    }

    public var path: String
    public var kind = Kind.unknown
    /// Lines (plain) or messages (archive) applied by earlier runs or live consumption, skipped now.
    public var alreadyApplied: Int64 = 0
    public var lines: Int64 = 0
    public var accepted = 0
    public var rejected: [Rejection.Reason: Int] = [:]
    /// Resent events not counted again (dedup).
    public var duplicates = 0
    /// Events counted though older than the dedup window (in `accepted` too).
    public var beyondWindow = 0

    public var rejectedCount: Int { rejected.values.reduce(0, +) }

    init(path: String) {
        self.path = path
    }
}

/// Hears how a replay goes: after each chunk of an input is read, and once when the input is done.
public protocol ReplayObserver {
    /// `bytesRead` of the input's stored bytes (compressed, if it is), of `size` when the size is known.
    mutating func read(_ report: ReplayReport, bytesRead: Int, of size: Int?)
    mutating func finished(_ report: ReplayReport)
}
