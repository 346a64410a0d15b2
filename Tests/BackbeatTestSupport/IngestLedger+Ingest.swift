import BackbeatCore

extension IngestLedger {
    /// `consume` of one message: what happened to it.
    @discardableResult
    public mutating func ingest(
        _ message: ConsumedMessage, now: Timestamp, onAccepted: ((EventRecord, UnsafeRawBufferPointer) -> Void)? = nil
    ) -> Outcome {
        var result = Outcome.ignored
        _ = consume([message], now: now, outcome: { result = $1 }, onAccepted: onAccepted)
        return result
    }
}
