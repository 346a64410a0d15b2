import BackbeatCore
import BackbeatStore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Follows what every process writing the stored numbers announces when its transaction commits
/// (`Store.changesChannel`: a flush, a replay's batch, a rebuild, retention), so that an instance answering from
/// PostgreSQL alone can keep answers while nothing they read changed: `stamps(of:days:)` move for an artist whose
/// numbers were written on those days (by `ArtistVersions`' shared counters), for every artist on an announcement for all of them, and
/// whenever listening starts again. While it does not listen (not yet, or its connection was lost), there is no
/// stamp: nothing may be kept.
final class StoredChangeListener: Service, Sendable {
    private struct State {
        var versions = ArtistVersions()
        var listening = false
    }

    private let store: Store
    private let logger: Logger
    private let state = Mutex(State())
    /// How long to wait before listening again after the connection was lost.
    private let retryDelay: Duration

    init(store: Store, logger: Logger, retryDelay: Duration = .seconds(1)) {
        self.store = store
        self.logger = logger
        self.retryDelay = retryDelay
    }

    /// What answers for `artist` over the UTC days `days` read of the stored numbers, family by family, as far as
    /// announced; nil while not listening.
    func stamps(of artist: String, days: Range<Int64>) -> ArtistVersions.Stamps? {
        state.withLock { $0.listening ? $0.versions.stamps(of: artist, days: days) : nil }
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    try await self.store.withDedicatedConnection { connection in
                        try await connection.listen(on: Store.changesChannel) { announcements in
                            // Whatever committed before now is in every read from here on.
                            self.state.withLock {
                                $0.versions.changedEverything()
                                $0.listening = true
                            }
                            for try await announcement in announcements {
                                let artists = ArtistDays(announcement: announcement.payload)
                                self.state.withLock { state in
                                    if let artists { state.versions.changed(artists) } else { state.versions.changedEverything() }
                                }
                            }
                        }
                    }
                }
            } catch where Task.isCancelled || Task.isShuttingDownGracefully {
                break
            } catch {
                logger.warning("lost the announcements of stored changes; answers are not kept until they are heard again",
                               metadata: ["error": "\(String(reflecting: error))"])
            }
            state.withLock {
                $0.listening = false
                $0.versions.changedEverything()
            }
            try? await cancelWhenGracefulShutdown { [retryDelay] in try await Task.sleep(for: retryDelay) }
        }
        state.withLock { $0.listening = false }
    }
}
