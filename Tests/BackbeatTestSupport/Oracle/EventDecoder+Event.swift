import BackbeatCore

extension EventDecoder {
    /// Decodes `value` into an `Event` of Strings, judging `occurred_at` against `now`: `decodeRecord`, by the same
    /// rules, with its strings made (the test oracle's events; the service keeps the record's spans).
    public static func decode(_ value: [UInt8]?, now: Timestamp) -> Result<Event, Rejection> {
        guard let value else { return .failure(nullValue) }
        return value.withUnsafeBytes { decode(bytes: $0, now: now) }
    }

    /// `decode(_:now:)` of the bytes of a (non-null) value.
    public static func decode(bytes: UnsafeRawBufferPointer, now: Timestamp) -> Result<Event, Rejection> {
        decodeRecord(bytes: bytes, now: now).map { $0.event(in: bytes) }
    }
}

extension EventDecoder {
    /// Decodes `value` into a `PageEvent` of Strings (`decode`); a valid event of another family is refused here as
    /// `unknown_type`.
    public static func decodePage(_ value: [UInt8], now: Timestamp) -> Result<PageEvent, Rejection> {
        decode(value, now: now).flatMap { event in
            if case .page(let page) = event { return .success(page) }
            return .failure(Rejection(.unknownType, "not a page event"))
        }
    }
}
