import BackbeatStore
import Hummingbird
import Logging
import ServiceLifecycle

/// Everything `backbeat serve` needs, built once by the command line.
public struct ServeConfiguration: Sendable {
    public var ingest: IngestConfiguration
    public var httpHost: String
    public var httpPort: Int
    public var adminToken: String
    /// Requests per second each artist token may make on average (bursts of twice that); 0: no limit.
    public var artistRequestsPerSecond: Double
    /// The web dashboard's static files, served at `/` (nil: no dashboard).
    public var webDirectory: String?
    /// How often `CompactionService` merges flushed rows.
    public var compactionInterval: Duration

    public init(
        ingest: IngestConfiguration, httpHost: String = "0.0.0.0", httpPort: Int = 8080, adminToken: String,
        compactionInterval: Duration = .seconds(5), artistRequestsPerSecond: Double = 20, webDirectory: String? = nil
    ) {
        self.compactionInterval = compactionInterval
        self.ingest = ingest
        self.httpHost = httpHost
        self.httpPort = httpPort
        self.adminToken = adminToken
        self.artistRequestsPerSecond = artistRequestsPerSecond
        self.webDirectory = webDirectory
    }
}

/// Builds the router: health checks, metrics and the web dashboard's static files open, everything under `/v1`
/// behind a bearer token (admin or artist).
public func buildRouter(
    store: Store, ingest: IngestService?, metrics: ServiceMetrics, adminToken: String, artistRequestsPerSecond: Double = 20,
    webDirectory: String? = nil
) -> Router<BackbeatRequestContext> {
    let router = Router(context: BackbeatRequestContext.self)
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    if let webDirectory {
        router.add(middleware: FileMiddleware(webDirectory, cacheControl: .init([(MediaType(type: .text), [.noCache]), (MediaType(type: .application), [.noCache])]), searchForIndexHtml: true))
    }
    HealthRoutes(store: store, ingest: ingest).add(to: router)
    MetricsRoute(metrics: metrics).add(to: router)
    let queries = QueryService(store: store, memory: ingest?.memory)
    let v1 = router.group("v1").add(middleware: AuthMiddleware(adminToken: adminToken, store: store, artistRequestsPerSecond: artistRequestsPerSecond))
    ArtistListRoute(store: store).add(to: v1)
    ArtistRoutes(queries: queries).add(to: v1)
    SummaryRoute(queries: queries).add(to: v1)
    QueryRoutes(queries: queries).add(to: v1)
    MemoryRoute(memory: ingest?.memory).add(to: v1)
    return router
}

/// Builds the whole service: the PostgreSQL pool, the ingest path and the HTTP server, shut down in reverse
/// order on SIGTERM (HTTP first, then ingest flushes and leaves the group, then a last compaction, then the pool closes).
public func buildApplication(configuration: ServeConfiguration, store: Store, logger: Logger) -> some ApplicationProtocol {
    let metrics = ServiceMetrics()
    let ingest = IngestService(configuration: configuration.ingest, store: store, metrics: metrics, logger: logger)
    let router = buildRouter(store: store, ingest: ingest, metrics: metrics, adminToken: configuration.adminToken,
                             artistRequestsPerSecond: configuration.artistRequestsPerSecond, webDirectory: configuration.webDirectory)
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "backbeat"),
        services: [store.client, CompactionService(store: store, interval: configuration.compactionInterval, logger: logger,
                                                     ingestIsCatchingUp: { ingest.isCatchingUp }), ingest],
        logger: logger)
}
