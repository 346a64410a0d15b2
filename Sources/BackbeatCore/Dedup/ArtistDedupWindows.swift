/// The dedup windows of one plain input, one per artist (`EventRecord.artistKey`): a plain file has no partitions,
/// so its events are told apart per artist, from the input's first line on. Never stored.
public struct ArtistDedupWindows: Sendable {
    private var windows: [UInt64: DedupWindow] = [:]

    public init() {}

    /// Admits `record`, decoded from `value`, into its artist's window.
    public mutating func admit(_ record: EventRecord, in value: UnsafeRawBufferPointer, spans: DedupSpans) -> DedupWindow.Decision {
        admit(record, key: ArtistDedupKey(record, in: value), in: value, spans: spans)
    }

    /// Admits `record`, decoded from `value`, by its `key` (taken ahead, where the record was decoded).
    public mutating func admit(_ record: EventRecord, key: ArtistDedupKey, in value: UnsafeRawBufferPointer, spans: DedupSpans) -> DedupWindow.Decision {
        windows[key.artist, default: .unstored].admit(record, fingerprint: key.fingerprint, in: value, spans: spans)
    }
}

/// What a plain input's windows look an event up by: its artist's key and its fingerprint. A replay takes it where
/// the line is decoded, on the core that runs ahead of the one counting the lines.
public struct ArtistDedupKey: Sendable {
    /// Which window: a hash of the artist's id (`EventRecord.artistKey`).
    public let artist: UInt64
    public let fingerprint: EventFingerprint

    public init(_ record: EventRecord, in value: UnsafeRawBufferPointer) {
        artist = record.artistKey(in: value)
        fingerprint = record.fingerprint(in: value)
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
