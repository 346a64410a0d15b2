/// The dedup windows of one plain input, one per artist (`EventRecord.artistKey`): a plain file has no partitions,
/// so its events are told apart per artist, from the input's first line on. Never stored.
public struct ArtistDedupWindows: Sendable {
    private var windows: [UInt64: DedupWindow] = [:]

    public init() {}

    /// Admits `record`, decoded from `value`, into its artist's window.
    public mutating func admit(_ record: EventRecord, in value: UnsafeRawBufferPointer, spans: DedupSpans) -> DedupWindow.Decision {
        windows[record.artistKey(in: value), default: .unstored].admit(record, in: value, spans: spans)
    }
}

extension EventRecord {
    /// A hash of the artist's id, the same in every process: which of a plain input's dedup windows (one per
    /// artist) the event goes through.
    public func artistKey(in value: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = StableHasher()
        hasher.add(self, artist, in: value)
        return hasher.value
    }
}
