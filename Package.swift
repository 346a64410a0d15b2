// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "backbeat",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "backbeat", targets: ["backbeat"]),
        .executable(name: "backbeat-load", targets: ["LoadGenerator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // A client generated from docs/openapi.yaml, as the portal's apps would make one (tests only).
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", exact: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", exact: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .systemLibrary(name: "CRdKafka", pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
        // glibc's malloc.h (malloc_trim), which its Swift module does not export.
        .systemLibrary(name: "CMalloc"),
        // Pure core: events, validation, buckets, rollups, query model. No I/O imports.
        .target(name: "BackbeatCore"),
        .target(
            name: "BackbeatKafka",
            dependencies: [
                "BackbeatCore", "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "BackbeatStore",
            dependencies: [
                "BackbeatCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Archive files: streaming zstd, line framing, content identity.
        .target(
            name: "BackbeatArchive",
            dependencies: ["BackbeatCore", "CZstd", "CXXHash", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Replay and rebuild: archives and event files applied to PostgreSQL exactly once, intervals recomputed.
        .target(
            name: "BackbeatReplay",
            dependencies: ["BackbeatCore", "BackbeatKafka", "BackbeatStore", "BackbeatArchive"]
        ),
        .target(
            name: "BackbeatServer",
            dependencies: [
                "BackbeatCore", "BackbeatKafka", "BackbeatStore", "BackbeatArchive", "CMalloc", "CZstd",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                // Queries forwarded to the instance that holds an artist in memory.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // docs/openapi.yaml (a link to it), served at /openapi.yaml as written.
            resources: [.embedInCode("HTTP/openapi.yaml")]
        ),
        .executableTarget(
            name: "backbeat",
            dependencies: [
                "BackbeatCore", "BackbeatKafka", "BackbeatStore", "BackbeatServer", "BackbeatArchive", "BackbeatReplay",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "BackbeatBenchmarks",
            dependencies: ["BackbeatCore", .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/BackbeatBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // scripts/bench's open-loop HTTP load generator.
        .executableTarget(
            name: "LoadGenerator",
            dependencies: [
                "BackbeatCore", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/LoadGenerator"
        ),
        // Test inputs shared by both test targets.
        .target(name: "BackbeatTestSupport", dependencies: ["BackbeatCore"], path: "Tests/BackbeatTestSupport"),
        // The API client swift-openapi-generator makes from docs/openapi.yaml (Tests/BackbeatAPIClient/openapi.yaml links to it).
        .target(
            name: "BackbeatAPIClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/BackbeatAPIClient",
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .testTarget(
            name: "BackbeatCoreTests",
            dependencies: ["BackbeatCore", "BackbeatTestSupport"]
        ),
        // The HTTP API in process: the router through Hummingbird's test client, against the real PostgreSQL.
        .testTarget(
            name: "BackbeatServerTests",
            dependencies: [
                "BackbeatCore", "BackbeatStore", "BackbeatServer", "BackbeatTestSupport", "CZstd",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "BackbeatIntegrationTests",
            dependencies: [
                "BackbeatCore", "BackbeatKafka", "BackbeatStore", "BackbeatArchive", "BackbeatReplay", "BackbeatTestSupport", "BackbeatAPIClient",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
