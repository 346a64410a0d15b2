import BackbeatCore
import BackbeatStore
import ServiceLifecycle
import Synchronization

/// The in-memory layers' upkeep, run by the flusher between flushes (so that none is in flight): stored aggregates
/// changed by another process noticed, the retained window loaded from PostgreSQL and installed.
extension IngestService {
    /// How long the flusher's loop waits for PostgreSQL to say what other processes changed.
    static let storedChangesLimit: Duration = .seconds(2)
    /// How long the flusher's loop waits for the retained window read from PostgreSQL (`loadSnapshotOfOwnedPartitions`).
    static let snapshotLimit: Duration = .seconds(120)

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
    /// When an artist's zone was set or changed, the events consumed from then on are counted in the new zones.
    ///
    /// Each read is bounded (`storedChangesLimit`): PostgreSQL that hangs must not hold the flusher's loop, whose next
    /// flush finds the hang and stops the service (`FlushHung`).
    func noticeStoredChanges() async {
        guard let latest = try? await awaitTask(limit: Self.storedChangesLimit, { [store] in try await store.storedChanges() }) else { return }
        let previous = seenStoredChanges.withLock { seen in
            defer { seen = latest }
            return seen
        }
        guard let previous, previous != latest else { return }
        if previous.zones != latest.zones {
            do {
                try await awaitTask(limit: Self.storedChangesLimit) { try await self.loadZones() }
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
    /// say within `storedChangesLimit`).
    private func storedAggregatesUnchangedSinceNoticed() async -> Bool {
        guard let seen = seenStoredChanges.withLock({ $0 }) else { return true }
        guard let now = try? await awaitTask(limit: Self.storedChangesLimit, { [store] in try await store.storedChanges() }) else { return false }
        return now.sameAggregates(as: seen)
    }

    /// When the partitions this instance owns are not all loaded (after an assignment, a rebuild, at the start),
    /// loads the retained window from PostgreSQL and installs it if the ledger's owned partitions still stand
    /// exactly at the snapshot's offsets (flushes run on this same loop, so none is in flight). Memory then answers
    /// alone for the artists whose messages arrive on owned partitions only (it loads only those), and for
    /// everything when it owns them all.
    func loadSnapshotOfOwnedPartitions() async {
        guard let memory, let all = state.read({ $0.allPartitions }), !all.isEmpty else { return }
        let owned = Set(state.read { $0.ledger.assigned })
        guard !owned.isEmpty, !memory.isLoaded(owned) else { return }
        let started = ContinuousClock.now
        let snapshot: StoredSnapshot
        let fromDay = memory.configuration.firstRetainedDay(today: Self.today())
        do {
            // Owning part of the partitions, only the artists held whole: the others are answered elsewhere. Bounded,
            // and given up at once when the service stops: a statement sent as its connection broke (a flush's lost
            // answer) has been seen never to return, and the flusher's loop, which waits here, must go on to stop.
            snapshot = try await cancelWhenGracefulShutdown { [store] in
                try await awaitTask(limit: Self.snapshotLimit) {
                    try await store.snapshot(fromDay: fromDay, artistsOf: owned == all ? nil : owned)
                }
            }
        } catch {
            logger.warning("cannot load the in-memory window from PostgreSQL; will retry", metadata: ["error": "\(error)"])
            return
        }
        // Seal and trim before installing, outside every lock: loaded rows arrive as open cells.
        var loaded = snapshot.memory
        let (sealed, dropped) = memory.trim(&loaded, today: Self.today())
        // A rebuild, a replay or retention that committed while the window was read may be missing from it, and the
        // answers PostgreSQL gave meanwhile have it: installed, the window would take them back until the next
        // notice. It is read again after that notice.
        guard await storedAggregatesUnchangedSinceNoticed() else {
            logger.info("stored aggregates changed while the in-memory window was read; reading it again")
            return
        }
        let installed = change {
            $0.installMemory(loaded, readAt: snapshot.offsets, owned: owned, everyPartition: owned == all, sealedDays: sealed, droppedDays: dropped)
        }
        if installed {
            logger.info("answering from memory: loaded the retained window", metadata: [
                "from_day": "\(RFC3339.formatDate(CivilDate(daysSinceEpoch: loaded.horizonDay)))",
                "partitions": "\(owned.count) of \(all.count)",
                "bytes": "\(loaded.byteCount)", "duration": "\(ContinuousClock.now - started)",
            ])
        }
    }
}
