/// An artist seen on a partition: where to look for the instance that holds the artist's numbers whole in memory
/// (each flush stores the pairs it has not stored before; `serve` routes a query for the artist by them).
public struct ArtistPartition: Hashable, Sendable {
    public var artistID: String
    public var topicPartition: TopicPartition

    public init(artistID: String, topicPartition: TopicPartition) {
        self.artistID = artistID
        self.topicPartition = topicPartition
    }
}

extension InternedDelta {
    /// The artists with any valid event in the delta.
    public var artistIDs: Set<String> {
        var ids = Set<UInt32>()
        for cell in streams.keys { ids.insert(cell.artist) }
        for cell in revenue.keys { ids.insert(cell.artist) }
        for cell in social.keys { ids.insert(cell.artist) }
        return Set(ids.map { values[$0] })
    }
}

extension FlushBatch {
    /// Each artist of the batch with each partition it arrived on.
    public var artistPartitions: Set<ArtistPartition> {
        var pairs = Set<ArtistPartition>()
        for part in parts {
            for artist in part.delta.artistIDs { pairs.insert(ArtistPartition(artistID: artist, topicPartition: part.topicPartition)) }
        }
        return pairs
    }
}
