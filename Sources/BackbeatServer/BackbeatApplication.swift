import BackbeatCore
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
    /// Where the other instances of the group reach this one (nil: queries are not forwarded between instances).
    public var cluster: ClusterConfiguration?
    /// How long stored numbers are kept.
    public var retention: RetentionSettings
    /// Most bytes of encoded answers kept for reuse (`AnswerCache`); 0: none kept.
    public var answerCacheBytes: Int

    public init(
        ingest: IngestConfiguration, httpHost: String = "0.0.0.0", httpPort: Int = 8080, adminToken: String,
        artistRequestsPerSecond: Double = 20, webDirectory: String? = nil,
        cluster: ClusterConfiguration? = nil, retention: RetentionSettings = RetentionSettings(),
        answerCacheBytes: Int = ServeConfiguration.defaultAnswerCacheBytes
    ) {
        self.answerCacheBytes = answerCacheBytes
        self.cluster = cluster
        self.retention = retention
        self.ingest = ingest
        self.httpHost = httpHost
        self.httpPort = httpPort
        self.adminToken = adminToken
        self.artistRequestsPerSecond = artistRequestsPerSecond
        self.webDirectory = webDirectory
    }
}

extension ServeConfiguration {
    public static let defaultAnswerCacheBytes = 64 << 20
}

/// Builds the router: health checks, metrics, the OpenAPI document and the web dashboard's static files open, everything under `/v1`
/// behind a bearer token (admin or artist). With `registry`, a query for an artist that memory here does not hold is
/// forwarded to the instance that holds it (`ArtistForwarding`).
func buildRouter(
    store: Store, ingest: IngestService?, metrics: ServiceMetrics, adminToken: String, artistRequestsPerSecond: Double = 20,
    webDirectory: String? = nil, registry: InstanceRegistry? = nil, answerCache: AnswerCache?, storedChanges: StoredChangeListener? = nil,
    clock: @escaping @Sendable () -> Timestamp = Timestamp.wallClock, plansMade: SharedCount = SharedCount()
) -> Router<BackbeatRequestContext> {
    let router = Router(context: BackbeatRequestContext.self)
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    let routeMethods = RouteMethods()
    router.add(middleware: ErrorMiddleware(routes: routeMethods))
    if let webDirectory {
        router.add(middleware: FileMiddleware(webDirectory, cacheControl: .init([(MediaType(type: .text), [.noCache]), (MediaType(type: .application), [.noCache])]), searchForIndexHtml: true))
    }
    HealthRoutes(store: store, ingest: ingest).add(to: router)
    MetricsRoute(metrics: metrics).add(to: router)
    OpenAPIRoute().add(to: router)
    let memory = ingest?.memory
    let artistPartitions = memory == nil ? nil : ArtistPartitionCache(store: store)
    // What answers read from PostgreSQL is kept beside them (from memory: the days before the horizon; without
    // memory: the days before the artist's last three), in half as many bytes again.
    let storedParts = answerCache.flatMap { StoredParts(bytes: $0.capacityBytes / 2, metrics: metrics) }
    let zones = ingest?.zones ?? ZoneBook()
    let queries = QueryService(
        store: store, memory: memory, artistPartitions: artistPartitions, cache: answerCache, storedParts: storedParts,
        storedChanges: storedChanges, zones: zones, clock: clock, plansMade: plansMade)
    let v1 = router.group("v1").add(middleware: AuthMiddleware(adminToken: adminToken, store: store, artistRequestsPerSecond: artistRequestsPerSecond))
    ArtistListRoute(store: store).add(to: v1)
    ArtistZoneRoute(store: store, zones: zones) {
        // An ingest reads them itself, between two flushes (`noticeStoredChanges`: what it consumed and did not flush is
        // consumed again in the new zones); without one, the reads' book is read again now.
        if ingest == nil { _ = try? await zones.reload(from: store) }
    }.add(to: v1)
    let artist = v1.group("artists/:artist_id")
    var forwarding: ArtistForwarding?
    if let registry, let memory, let artistPartitions {
        forwarding = ArtistForwarding(
            configuration: registry.configuration, registry: registry, artistPartitions: artistPartitions, memory: memory,
            metrics: metrics, adminToken: adminToken, logger: registry.logger)
    }
    artist.add(middleware: ArtistPlanning(queries: queries, forwarding: forwarding))
    ArtistRoutes(queries: queries).add(to: artist)
    SummaryRoute(queries: queries).add(to: artist)
    QueryRoutes(queries: queries).add(to: v1)
    MemoryRoute(memory: memory, registry: registry).add(to: v1)
    IngestRoute(ingest: ingest).add(to: v1)
    routeMethods.learn(router.routes.map { (method: $0.method.rawValue, path: $0.path.description) })
    return router
}

/// `buildRouter` as the in-process tests build it: one instance, no forwarding.
public func buildRouter(
    store: Store, ingest: IngestService?, metrics: ServiceMetrics, adminToken: String, artistRequestsPerSecond: Double = 20,
    answerCacheBytes: Int = ServeConfiguration.defaultAnswerCacheBytes
) -> Router<BackbeatRequestContext> {
    buildRouter(store: store, ingest: ingest, metrics: metrics, adminToken: adminToken, artistRequestsPerSecond: artistRequestsPerSecond,
                webDirectory: nil, registry: nil, answerCache: AnswerCache(bytes: answerCacheBytes, metrics: metrics))
}

/// Builds the whole service: the PostgreSQL pool, the ingest path, the instance's heartbeat and the HTTP server,
/// shut down in reverse order on SIGTERM (HTTP first, then the instance's record is removed, then ingest flushes
/// and leaves the group, then retention stops, then the pool closes).
public func buildApplication(configuration: ServeConfiguration, store: Store, logger: Logger) -> some ApplicationProtocol {
    let metrics = ServiceMetrics()
    let atStop = PostgresAtStop(store: store)
    let ingest = IngestService(configuration: configuration.ingest, store: store, metrics: metrics, logger: logger, postgresAtStop: atStop)
    let registry = configuration.cluster.map {
        InstanceRegistry(configuration: $0, store: store, memory: ingest.memory, logger: logger, postgresAtStop: atStop)
    }
    let answerCache = AnswerCache(bytes: configuration.answerCacheBytes, metrics: metrics)
    // Without memory, answers are kept by the stored changes every writer announces.
    let storedChanges = ingest.memory == nil && answerCache != nil ? StoredChangeListener(store: store, logger: logger) : nil
    let router = buildRouter(store: store, ingest: ingest, metrics: metrics, adminToken: configuration.adminToken,
                             artistRequestsPerSecond: configuration.artistRequestsPerSecond, webDirectory: configuration.webDirectory,
                             registry: registry, answerCache: answerCache, storedChanges: storedChanges)
    var services: [any Service] = [
        store,
        MaintenanceService(store: store, retention: configuration.retention, logger: logger, metrics: metrics),
        DetailCompactionService(store: store, logger: logger, metrics: metrics),
        ingest,
    ]
    if let storedChanges { services.append(storedChanges) }
    if let registry { services.append(registry) }
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "backbeat"),
        services: services,
        logger: logger)
}
