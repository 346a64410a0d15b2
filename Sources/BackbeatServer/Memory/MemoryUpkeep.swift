import BackbeatCore
import BackbeatStore
import ServiceLifecycle

/// The in-memory layers' upkeep, run by the flusher between flushes (so that none is in flight): the retained window
/// loaded from PostgreSQL and installed.
extension IngestService {
    /// How long the flusher's loop waits for the retained window read from PostgreSQL (`loadSnapshotOfOwnedPartitions`).
    static let snapshotLimit: Duration = .seconds(120)

    /// When the partitions this instance owns are not all loaded (after an assignment, a rebuild, at the start),
    /// loads the retained window from PostgreSQL and installs it if the ledger's owned partitions still stand
    /// exactly at the snapshot's offsets (flushes run on this same loop, so none is in flight). Memory then answers
    /// alone for the artists whose messages arrive on owned partitions only (it loads only those), and for
    /// everything when it owns them all.
    func loadSnapshotOfOwnedPartitions() async {
        guard let memory, let all = state.read({ $0.allPartitions }), !all.isEmpty else { return }
        let owned = Set(state.read { $0.ledger.assigned })
        guard !owned.isEmpty, !memory.isLoaded(owned) else { return }
        // A rebuild, a replay or retention not noticed yet: the window is read after the notice (which marks the
        // days stale), not before it.
        guard await storedAggregatesUnchangedSinceNoticed() else { return }
        let started = ContinuousClock.now
        let snapshot: StoredSnapshot
        let fromDay = memory.configuration.firstRetainedDay(today: Self.today())
        do {
            // Owning part of the partitions, only the artists held whole: the others are answered elsewhere. Bounded,
            // and given up at once when the service stops: a statement sent as its connection broke (a flush's lost
            // answer) has been seen never to return, and the flusher's loop, which waits here, must go on to stop.
            snapshot = try await awaitTask(limit: Self.snapshotLimit, stopGrace: .zero) { [store] in
                try await store.snapshot(fromDay: fromDay, artistsOf: owned == all ? nil : owned)
            }
        } catch where Task.isShuttingDownGracefully {
            logger.info("the service is stopping: the read of the in-memory window is given up")
            return
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
