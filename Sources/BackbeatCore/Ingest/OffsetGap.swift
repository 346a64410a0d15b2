/// Messages of a partition that the broker deleted before this consumer read them (retention ran past the
/// position), or a position past the end of the broker's log (the topic was recreated or truncated).
///
/// A gap is never skipped silently: it is stored in PostgreSQL (`offset_gaps`) with the offset move that steps
/// over it, in the same transaction, or stored as waiting while the partition waits for an operator
/// (`backbeat offsets reset`).
public struct OffsetGap: Hashable, Sendable {
    public var topicPartition: TopicPartition
    /// The position consumption stood at: the first offset not on the broker.
    public var firstMissing: Int64
    /// The first offset the broker still has.
    public var logStart: Int64
    /// The offset after the broker's last message.
    public var logEnd: Int64
    /// When the consumer found it.
    public var detectedAt: Timestamp
    /// Where consumption moved on to (the log start), or nil while the partition waits for an operator.
    public var resumedAt: Int64?

    public init(topicPartition: TopicPartition, firstMissing: Int64, logStart: Int64, logEnd: Int64, detectedAt: Timestamp, resumedAt: Int64?) {
        self.topicPartition = topicPartition
        self.firstMissing = firstMissing
        self.logStart = logStart
        self.logEnd = logEnd
        self.detectedAt = detectedAt
        self.resumedAt = resumedAt
    }

    /// Whether the position is before the log's start, so the messages from it up to the start were deleted;
    /// otherwise it is past the log's end and which messages are missing cannot be known.
    public var isDeletedRange: Bool { firstMissing < logStart }

    /// The last offset deleted (nil when the position is past the log's end).
    public var lastMissing: Int64? { isDeletedRange ? logStart - 1 : nil }

    /// How many offsets were deleted unread (nil when the position is past the log's end).
    public var missingCount: Int64? { isDeletedRange ? logStart - firstMissing : nil }

    /// `topic/partition offsets first-last`, or `topic/partition: offset N past the log's end M`.
    public var rangeDescription: String {
        if let lastMissing { return "\(topicPartition) offsets \(firstMissing)-\(lastMissing)" }
        return "\(topicPartition): offset \(firstMissing) past the log's end \(logEnd)"
    }
}

/// What the ingest does when a partition's position is no longer on the broker.
public enum OffsetGapPolicy: String, Sendable, CaseIterable {
    /// Record the gap and go on from the first offset the broker still has (the default).
    case resume
    /// Record the gap and consume nothing more of the partition until an operator moves its stored offset
    /// (`backbeat offsets reset`).
    case stop
}
