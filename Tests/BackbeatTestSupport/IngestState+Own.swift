import BackbeatCore

extension IngestState {
    /// `partitions` assigned and owned from the stored offsets `stored`, through the exchange the source runs: a
    /// read of their stored offsets, then a seek.
    public mutating func own(_ partitions: [TopicPartition], stored: [TopicPartition: Int64] = [:]) {
        assigned(partitions)
        guard let (read, _) = nextStoredOffsetRead() else { return }
        storedOffsetsRead(read, stored)
        for seek in takeSeeks() { sought(seek) }
    }
}
