import BackbeatCore
import BackbeatStore
import Logging
import ServiceLifecycle

/// Moves flushed listener sketches from the append-only `_delta` tables into the merged ones (`Store.compact`) every `interval`
/// (deferred while the ingest catches up: `Schedule`), and once more on shutdown, after ingest's final flush (services
/// stop in reverse order). After a round, at most once a minute, applies retention (`Store.applyRetention`): months
/// of hourly detail past `RetentionSettings.detailDays` rolled into daily rows, months past `cubeMonths` dropped.
///
/// Flushes only append sketches, so this keeps the deltas that readers scan beside the merged tables short. A failure is
/// logged and tried again at the next interval: nothing is lost, the rows wait in the delta tables meanwhile.
public struct CompactionService: Service {
    let store: Store
    let interval: Duration
    let logger: Logger
    /// Whether the ingest is catching up (`IngestService.isCatchingUp`); rounds are deferred meanwhile.
    let ingestIsCatchingUp: @Sendable () -> Bool
    /// What is kept (nil: everything, forever).
    let retention: RetentionSettings?
    /// Whether PostgreSQL answers at the stop: the last round is skipped when it does not.
    let postgresAtStop: PostgresAtStop

    public init(
        store: Store, interval: Duration = .seconds(5), logger: Logger, ingestIsCatchingUp: @escaping @Sendable () -> Bool = { false },
        retention: RetentionSettings? = nil, postgresAtStop: PostgresAtStop? = nil
    ) {
        self.postgresAtStop = postgresAtStop ?? PostgresAtStop(store: store)
        self.store = store
        self.interval = interval
        self.logger = logger
        self.ingestIsCatchingUp = ingestIsCatchingUp
        self.retention = retention
    }

    /// How often retention is looked at: it acts on whole months.
    static let retentionInterval: Duration = .seconds(60)

    /// The longest a round yields to a catching-up ingest.
    static let maximumDeferral: Duration = .seconds(60)

    public func run() async throws {
        var schedule = Schedule(maximumDeferral: Self.maximumDeferral, lastRound: .now)
        var lastRetention: ContinuousClock.Instant?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            // The round on a stop always runs, unless PostgreSQL does not answer.
            if !Task.isShuttingDownGracefully && schedule.defers(at: .now, ingestIsCatchingUp: ingestIsCatchingUp()) { continue }
            if Task.isShuttingDownGracefully, !(await postgresAtStop.answers()) {
                logger.notice("no last compaction: PostgreSQL does not answer; the rows wait in the delta tables")
                break
            }
            await compactOnce()
            schedule.lastRound = .now
            if let retention, !Task.isShuttingDownGracefully, lastRetention.map({ .now - $0 >= Self.retentionInterval }) ?? true {
                await applyRetention(retention)
                lastRetention = .now
            }
        }
    }

    /// When a periodic round yields to the ingest. A round's PostgreSQL work per row is several times a flush's, on
    /// the same cores: while a backlog is being made durable, it is deferred, at most `maximumDeferral` after the
    /// last round. The rows wait in the delta tables meanwhile (every query counts them); one larger round later also
    /// costs less than many small ones (the derived cubes' rows fold together).
    struct Schedule {
        var maximumDeferral: Duration
        var lastRound: ContinuousClock.Instant

        func defers(at now: ContinuousClock.Instant, ingestIsCatchingUp: Bool) -> Bool {
            ingestIsCatchingUp && now - lastRound < maximumDeferral
        }
    }

    /// How long one round is awaited. A large round (millions of delta rows after a long catch-up) takes minutes;
    /// a round whose statement went out as its connection broke has been seen never to return (postgres-nio 1.33.2),
    /// and waiting for it would end compaction for good, and hang the stop.
    static let roundLimit: Duration = .seconds(600)

    private func applyRetention(_ retention: RetentionSettings) async {
        let today = Timestamp.wallClock().daysSinceEpoch
        do {
            let outcome = try await awaitTask(limit: Self.roundLimit) { [store] in
                try await store.applyRetention(detailKeptFrom: retention.detailKeptFrom(today: today), cubesKeptFrom: retention.cubesKeptFrom(today: today))
            }
            if !outcome.rolled.isEmpty || !outcome.dropped.isEmpty {
                logger.notice("retention: months rolled into daily rows or dropped", metadata: [
                    "rolled": "\(outcome.rolled.joined(separator: ","))", "dropped": "\(outcome.dropped.joined(separator: ","))"])
            }
        } catch where Task.isCancelled {
            return
        } catch {
            logger.warning("retention failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    private func compactOnce() async {
        let started = ContinuousClock.now
        do {
            let moved = try await postgresAtStop.cancellingIfUnanswered(limit: Self.roundLimit) { [store] in try await store.compact() }
            if moved > 0 {
                logger.debug("compacted", metadata: ["rows": "\(moved)", "duration": "\(ContinuousClock.now - started)"])
            }
        } catch where Task.isCancelled || error is PostgresDoesNotAnswer {
            logger.notice("compaction cut short by the stop; the rows wait in the delta tables")
        } catch let timedOut as WaitTimedOut {
            // Its transaction, if the server still runs it, holds the compaction lock: later rounds skip until it ends.
            logger.warning("compaction round abandoned; the next round starts over", metadata: ["error": "\(timedOut)"])
        } catch {
            logger.warning("compaction failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
