// swift-tools-version:6.0
import PackageDescription

// The server's layers, each a target so the compiler keeps the graph acyclic (docs/architecture.md):
//   Support ← Domain ← Application ← API
//   Support ← Store (the storage contract) ← Application ← API
//   Store ← Storage (SQLite: CSQLite) ← TabStore
//   Store ← Postgres (CPostgres) ← TabStore
//   Support ← HTTP ← Server (CSystem)
//   Support ← Auth (CCrypto) ← Application, API
//   Assets (openapi.yaml, console/ embedded) ← API
//   everything ← TabStore (the composition root, Sources/TabStore/Service) ← tab-server
// Cross-layer symbols are `package`, never `public`, unless the TabStore library product exports them.
//
// Platforms: the server's targets (everything but TabStoreClient) build on Linux only (epoll, Glibc); elsewhere the
// build stops at once with one message pointing to the container (Sources/TabStore/Support/Platform.swift).
// TabStoreClient, the library apps add, builds on iOS 17, macOS 15 and Linux: the platforms below are its.
let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "TabStore",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "tab-server", targets: ["tab-server"]),
        .library(name: "TabStore", targets: ["TabStore"]),
        // The Swift client apps add (docs/client.md): Foundation only, nothing of the server.
        .library(name: "TabStoreClient", targets: ["TabStoreClient"]),
        // The SwiftUI bridge (docs/client.md "SwiftUI"): TabViewCustomization kept in step with the service.
        .library(name: "TabStoreSwiftUI", targets: ["TabStoreSwiftUI"]),
    ],
    targets: [
        // SQLite from the system (Debian: libsqlite3-dev). modulemap + shim only.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // OpenSSL's libcrypto for HMAC-SHA256, random bytes and constant-time comparison (Debian: libssl-dev).
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        // PostgreSQL's client library libpq (Debian: libpq-dev), for the PostgreSQL backend. modulemap + shim only.
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", providers: [.apt(["libpq-dev"])]),
        // Linux syscalls Glibc's module does not export (epoll, accept4, eventfd), as static inline wrappers.
        .systemLibrary(name: "CSystem", path: "Sources/CSystem"),

        // Identifiers, JSON, logging, locks: what every layer uses. No C module.
        .target(name: "TabStoreSupport", path: "Sources/TabStore/Support", swiftSettings: swift6),
        // Tab schemas, customizations, operations, reconciliation, layouts: pure rules, no I/O, no C module.
        .target(name: "TabStoreDomain", dependencies: ["TabStoreSupport"], path: "Sources/TabStore/Domain", swiftSettings: swift6),
        // The storage contract: the backend protocol, its records, commits and changes, its errors and the policies
        // every backend keeps alike. No database in it: the two backends below are sibling adapters of it.
        .target(name: "TabStoreStore", dependencies: ["TabStoreSupport"], path: "Sources/TabStore/Store", swiftSettings: swift6),
        // The SQLite backend, the embedded default (one writer, a read pool, migrations).
        .target(name: "TabStoreStorage", dependencies: ["TabStoreStore", "TabStoreSupport", "CSQLite"], path: "Sources/TabStore/Storage",
                swiftSettings: swift6),
        // The PostgreSQL backend (TAB_SERVER_DATABASE_URL): a connection pool over libpq, migrations under an advisory lock.
        .target(name: "TabStorePostgres", dependencies: ["TabStoreStore", "TabStoreSupport", "CPostgres"], path: "Sources/TabStore/Postgres",
                swiftSettings: swift6),
        // HTTP/1.1 messages, the request parser, the router, entity tags, the responder protocol.
        .target(name: "TabStoreHTTP", dependencies: ["TabStoreSupport"], path: "Sources/TabStore/HTTP", swiftSettings: swift6),
        // The server on POSIX sockets: event loops, connections, limits, shutdown.
        .target(name: "TabStoreServer", dependencies: ["TabStoreHTTP", "TabStoreSupport", "CSystem"], path: "Sources/TabStore/Server",
                swiftSettings: swift6),
        // Tokens: JWT (HS256), the token cache, libcrypto.
        .target(name: "TabStoreAuth", dependencies: ["TabStoreSupport", "CCrypto"], path: "Sources/TabStore/Auth", swiftSettings: swift6),
        // What the binary serves from files: openapi.yaml and console/ (their only copies, at the top of the repository,
        // linked into the target's folder), embedded in code at build time. No dependency; no generated source in git.
        .target(name: "TabStoreAssets", path: "Sources/TabStoreAssets",
                resources: [.embedInCode("openapi.yaml"), .embedInCode("console")], swiftSettings: swift6),
        // The application layer: the use cases over the storage contract (a user's writes taking turns, idempotent
        // answers, publishing after commit, the caches reads share), plain async code with no HTTP in it.
        .target(name: "TabStoreApplication", dependencies: ["TabStoreDomain", "TabStoreStore", "TabStoreAuth", "TabStoreSupport"],
                path: "Sources/TabStore/Application", swiftSettings: swift6),
        // The REST API v1: routes, middleware, problems, metrics, over the application layer.
        .target(name: "TabStoreAPI", dependencies: ["TabStoreApplication", "TabStoreDomain", "TabStoreStore", "TabStoreHTTP", "TabStoreAuth", "TabStoreAssets", "TabStoreSupport"],
                path: "Sources/TabStore/API", swiftSettings: swift6),
        // The composition root: options, data folder, wiring storage, API and server together.
        .target(
            name: "TabStore",
            dependencies: ["TabStoreAPI", "TabStoreApplication", "TabStoreServer", "TabStoreStore", "TabStoreStorage", "TabStorePostgres", "TabStoreDomain", "TabStoreHTTP", "TabStoreAuth", "TabStoreSupport"],
            path: "Sources/TabStore/Service",
            swiftSettings: swift6,
            linkerSettings: [.linkedLibrary("m")]
        ),
        .executableTarget(name: "tab-server", dependencies: ["TabStore"], swiftSettings: swift6),
        // The client library for apps (iOS, macOS, Linux): Foundation (FoundationNetworking on Linux) and nothing else.
        .target(name: "TabStoreClient", path: "Sources/TabStoreClient", swiftSettings: swift6),
        // The SwiftUI bridge: its engine works on a protocol of TabViewCustomization's members (tested on Linux with a
        // fake); SwiftUI's own type conforms under `#if canImport(SwiftUI)`. Depends on the client only.
        .target(name: "TabStoreSwiftUI", dependencies: ["TabStoreClient"], path: "Sources/TabStoreSwiftUI", swiftSettings: swift6),
        // `swift run -c release tabstore-bench-storage`: the storage layer alone, no HTTP (bench/README.md).
        .executableTarget(name: "tabstore-bench-storage", dependencies: ["TabStoreStore", "TabStoreStorage", "TabStoreSupport"], path: "bench/storage",
                          swiftSettings: swift6),
        // libFuzzer targets (scripts/fuzz builds them with the fuzzer sanitizer; a plain build replays corpora).
        // They link the parsers and rules only: HTTP, JSON, JWT, the domain (no storage, no server).
        .executableTarget(
            name: "tabstore-fuzz",
            dependencies: ["TabStoreHTTP", "TabStoreDomain", "TabStoreAuth", "TabStoreSupport"],
            path: "Tests/Fuzz",
            exclude: ["corpus"],
            swiftSettings: swift6
        ),
        // Tests, one target per server layer, on a shared support target: the live service fixture (a real server on
        // 127.0.0.1 port 0 over a real SQLite file or a throwaway PostgreSQL cluster), credentials, HTTP test clients.
        .target(
            name: "TabStoreTestSupport",
            dependencies: ["TabStore", "TabStoreAPI", "TabStoreApplication", "TabStoreServer", "TabStoreStore", "TabStoreStorage", "TabStorePostgres", "TabStoreDomain",
                           "TabStoreHTTP", "TabStoreAuth", "TabStoreSupport"],
            path: "Tests/TabStoreTestSupport",
            swiftSettings: swift6
        ),
        .testTarget(name: "TabStoreDomainTests", dependencies: ["TabStoreDomain", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreDomainTests", swiftSettings: swift6),
        .testTarget(name: "TabStoreHTTPTests", dependencies: ["TabStoreHTTP", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreHTTPTests", swiftSettings: swift6),
        .testTarget(name: "TabStoreServerTests", dependencies: ["TabStoreServer", "TabStoreHTTP", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreServerTests", swiftSettings: swift6),
        .testTarget(name: "TabStoreAuthTests", dependencies: ["TabStoreAuth", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreAuthTests", swiftSettings: swift6),
        .testTarget(name: "TabStoreApplicationTests",
                    dependencies: ["TabStoreApplication", "TabStoreStore", "TabStoreStorage", "TabStoreDomain", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreApplicationTests", swiftSettings: swift6),
        .testTarget(name: "TabStoreStorageTests",
                    dependencies: ["TabStoreStore", "TabStoreStorage", "TabStorePostgres", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreStorageTests", swiftSettings: swift6),
        // The API end to end: through the composed service (TabStore) on real sockets, or in process.
        .testTarget(name: "TabStoreAPITests",
                    dependencies: ["TabStoreAPI", "TabStoreApplication", "TabStore", "TabStoreStore", "TabStoreStorage", "TabStorePostgres", "TabStoreDomain", "TabStoreHTTP",
                                   "TabStoreAuth", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreAPITests", swiftSettings: swift6),
        // The composition root and the real binary: start-up, signals, the CLI, operations, documentation.
        .testTarget(name: "TabStoreServiceTests",
                    dependencies: ["TabStore", "TabStoreAPI", "TabStoreApplication", "TabStoreServer", "TabStoreStore", "TabStoreStorage", "TabStorePostgres",
                                   "TabStoreDomain", "TabStoreHTTP", "TabStoreAuth", "TabStoreSupport", "TabStoreTestSupport"],
                    path: "Tests/TabStoreServiceTests", swiftSettings: swift6),
        // The client against a real server started in-process (the server's targets serve it; the client imports none).
        .testTarget(
            name: "TabStoreClientTests",
            dependencies: ["TabStoreClient", "TabStoreSwiftUI", "TabStore", "TabStoreAuth", "TabStoreSupport"],
            path: "Tests/TabStoreClientTests",
            swiftSettings: swift6
        ),
    ]
)
