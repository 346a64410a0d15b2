import BackbeatCore

extension InternedDelta {
    /// The delta of `events` as a consumer adds them: each written as its JSON line, decoded and added (judged
    /// against its own time, so none is in the future).
    public init(events: some Sequence<Event>) {
        self.init()
        for event in events {
            let line = Array(EventEncoder.json(event).utf8)
            guard case .success(let record) = EventDecoder.decodeRecord(line, now: event.occurredAt) else {
                preconditionFailure("a valid event is rejected once written as JSON: \(EventEncoder.json(event))")
            }
            line.withUnsafeBytes { add(record, in: $0) }
        }
    }
}

extension InternedDelta {
    /// This delta with its sessions counted in the page funnel as a flush counts sessions it finds no stored state of
    /// (`Store.mergeSessions`): what a delta of a first flush writes.
    public func withSessionsCounted() -> InternedDelta {
        var counted = self
        for (cell, state) in sessions.rows {
            for change in FunnelSession.changes(from: nil, to: state) {
                counted.addFunnel(artistID: values[cell.artist], portfolioID: values[cell.portfolio], at: change.at, change.counts)
            }
        }
        return counted
    }
}
