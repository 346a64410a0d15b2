/// How far an archive segment is written when a flush commits: stored in the flush's transaction, so that after a
/// crash the segment is cut back to exactly the messages the aggregates hold.
public struct ArchiveSegmentPosition: Equatable, Sendable {
    /// The segment's path below the archive directory, as it is named once sealed.
    public var name: String
    public var topicPartition: TopicPartition
    /// The run's start (see `ArchiveRun`).
    public var fromOffset: Int64?
    /// One past the last offset in the segment.
    public var nextOffset: Int64
    /// The segment's length in bytes (compressed, as on disk).
    public var bytes: Int64

    public init(name: String, topicPartition: TopicPartition, fromOffset: Int64?, nextOffset: Int64, bytes: Int64) {
        self.name = name
        self.topicPartition = topicPartition
        self.fromOffset = fromOffset
        self.nextOffset = nextOffset
        self.bytes = bytes
    }
}
