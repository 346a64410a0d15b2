extension DedupWindow {
    /// What dedup decides of one valid event, as the ingest, a replay and a rebuild act on it.
    public enum Decision: Equatable, Sendable {
        /// Count it.
        case count
        /// Count it, though it is older than the window: a resend of it would be counted again.
        case countBeyondWindow
        /// A resend of an event counted within the window: count nothing.
        case duplicate
        /// Another event under an id counted within the window: reject it, with this rejection.
        case reject(Rejection)
    }

    /// Admits `record`, decoded from `value`, for as long as its family is remembered in `spans`.
    public mutating func admit(_ record: EventRecord, in value: UnsafeRawBufferPointer, spans: DedupSpans) -> Decision {
        admit(record, fingerprint: record.fingerprint(in: value), in: value, spans: spans)
    }

    /// Admits `record`, decoded from `value`, by its `fingerprint` (taken ahead, where the record was decoded).
    public mutating func admit(_ record: EventRecord, fingerprint: EventFingerprint, in value: UnsafeRawBufferPointer, spans: DedupSpans) -> Decision {
        switch admit(fingerprint, occurredAt: record.occurredAt.seconds, span: spans.span(of: record)) {
        case .new: .count
        case .beyondWindow: .countBeyondWindow
        case .duplicate: .duplicate
        case .conflict: .reject(record.conflictingID(in: value))
        }
    }
}
