import BackbeatStore

/// What other processes change in PostgreSQL that this instance must follow, polled by the flusher between flushes
/// (`Store.storedChanges`): a rebuild or a replay (the in-memory days are read again), retention (answers kept from
/// before are retired), an artist's zone (what is not flushed is consumed again and counted in it).
extension IngestService {
    /// How long the flusher's loop waits for PostgreSQL on a read it makes between flushes: what other processes
    /// changed, the zones set, the offsets an operator moved.
    static let betweenFlushesReadLimit: Duration = .seconds(2)
    /// How long the start waits for PostgreSQL to say what changed and which zones the artists report in.
    static let startReadsLimit: Duration = .seconds(30)

    /// What is stored as the service starts, and the zones before the first event: read once here, then again whenever
    /// one is set (`noticeStoredChanges`, which compares with what is seen before this read, so a zone set meanwhile is
    /// read again). Bounded, and given up (`CancellationError`) when the service stops: a PostgreSQL that hangs here
    /// must not hold the stop.
    func readStoredChangesAtStart() async throws {
        let seen = try await awaitTask(limit: Self.startReadsLimit, stopGrace: .zero) { [store] in try await store.storedChanges() }
        seenStoredChanges.withLock { $0 = seen }
        try await awaitTask(limit: Self.startReadsLimit, stopGrace: .zero) { try await self.loadZones() }
    }

    /// Reads the artists' zones recorded in PostgreSQL into `zones` and hands them to the state: the events consumed
    /// from then on are counted on their artists' local days.
    public func loadZones() async throws {
        let zones = try await self.zones.reload(from: store)
        change { $0.zonesChanged(zones) }
        logger.info("artists' reporting zones read", metadata: ["artists_outside_utc": "\(zones.count)"])
    }

    /// When a `backbeat rebuild` or a `backbeat replay` changed the stored aggregates, the in-memory days may be
    /// stale: answer from PostgreSQL until the snapshot is loaded again (on this same loop). When retention dropped
    /// stored numbers, answers kept from before are retired.
    /// When an artist's zone was set or changed, the events consumed from then on are counted in the new zones, and what
    /// was consumed and not flushed is consumed again in them (`IngestState.zonesChanged`).
    ///
    /// Each read is bounded (`betweenFlushesReadLimit`): PostgreSQL that hangs must not hold the flusher's loop, whose next
    /// flush finds the hang and stops the service (`FlushHung`).
    func noticeStoredChanges() async {
        guard let latest = await currentStoredChanges() else { return }
        let previous = seenStoredChanges.withLock { seen in
            defer { seen = latest }
            return seen
        }
        guard let previous, previous != latest else { return }
        if previous.zones != latest.zones {
            do {
                try await awaitTask(limit: Self.betweenFlushesReadLimit) { try await self.loadZones() }
            } catch {
                // Tried again after the next flush.
                seenStoredChanges.withLock { $0?.zones = previous.zones }
                logger.error("cannot read the artists' zones; events are counted in the zones read before", metadata: ["error": "\(error)"])
            }
        }
        guard memory != nil else { return }
        if previous.rebuild != latest.rebuild || previous.replayed != latest.replayed {
            change { $0.storedAggregatesReplaced() }
            logger.notice("a rebuild or a replay changed stored aggregates; reloading the in-memory days", metadata: [
                "rebuild": "\(latest.rebuild)", "replayed": "\(latest.replayed)"])
        }
        if previous.retention != latest.retention { change { $0.storedNumbersDropped() } }
    }

    /// Whether the stored aggregates are still as `noticeStoredChanges` last saw them (false when PostgreSQL does not
    /// say within `betweenFlushesReadLimit`).
    func storedAggregatesUnchangedSinceNoticed() async -> Bool {
        guard let seen = seenStoredChanges.withLock({ $0 }) else { return true }
        guard let now = await currentStoredChanges() else { return false }
        return now.sameAggregates(as: seen)
    }

    /// What PostgreSQL says other processes changed, within `betweenFlushesReadLimit` (nil: it did not say, or the service
    /// is stopping).
    private func currentStoredChanges() async -> Store.StoredChanges? {
        try? await awaitTask(limit: Self.betweenFlushesReadLimit, stopGrace: .zero) { [store] in try await store.storedChanges() }
    }
}
