import Foundation
import TabStoreAuth
import TabStoreStorage
import TabStoreStore
import TabStoreSupport

/// The work of `tab-server`'s subcommands, so the executable only parses, dispatches and handles signals.
public enum Commands {
    /// `token --app ID --user ID [--ttl SECONDS]`: a development JWT signed with the app's current secret.
    /// - Throws: `ConfigurationError` for a bad flag, an invalid id or an unknown app; `StorageError`.
    public static func token(_ options: ServiceOptions, _ arguments: [String]) async throws -> String {
        var app: String?
        var user: String?
        var ttl = 3600
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            guard index + 1 < arguments.count else { throw ConfigurationError(description: "\(flag) needs a value") }
            let value = arguments[index + 1]
            switch flag {
            case "--app": app = value
            case "--user": user = value
            case "--ttl":
                guard let seconds = Int(value), seconds > 0, seconds <= 31_536_000 else {
                    throw ConfigurationError(description: "--ttl must be 1-31536000 seconds")
                }
                ttl = seconds
            default: throw ConfigurationError(description: "unknown option \(flag) for token")
            }
            index += 2
        }
        guard let app, let user else { throw ConfigurationError(description: "usage: tab-server token --app ID --user ID [--ttl SECONDS]") }
        guard Identifier(app).isValidAppId else { throw ConfigurationError(description: "--app must be 1-128 bytes of A-Z a-z 0-9 . _ -") }
        guard Identifier(user).isValidId else {
            throw ConfigurationError(description: "--user must be 1-\(Identifier.maxBytes) UTF-8 bytes without control characters")
        }
        let record = try await withStore(options, create: false) { try await $0.app(app) }
        guard let record else { throw ConfigurationError(description: "no app \(app) in \(options.databaseDescription)") }
        let now = Int(Date().timeIntervalSince1970)
        return JWT.sign(subject: Identifier(user), audience: Identifier(app), expiresAt: now + ttl, issuedAt: now, secret: record.signingSecret)
    }

    /// `backup PATH`: a consistent copy of the database while it may be serving.
    /// - Throws: `ConfigurationError` when there is no database, `StorageError`.
    public static func backup(_ options: ServiceOptions, to path: String) async throws {
        if options.databaseURL != nil {
            throw ConfigurationError(
                description:
                    "the database is PostgreSQL (TAB_SERVER_DATABASE_URL): back it up with pg_dump, e.g. pg_dump --format=custom --file=tabstore.dump \"$TAB_SERVER_DATABASE_URL\" (or your provider's point-in-time recovery); tab-server backup copies only the embedded SQLite database"
            )
        }
        try await withStore(options, create: false) { try await $0.backup(to: path) }
    }

    /// `demo`: creates the demo app with its schema when missing; returns the lines to print (what it made,
    /// and the `token` and `serve` commands for the same database, whatever the working folder is).
    public static func demo(_ options: ServiceOptions) async throws -> [String] {
        let app = try await withStore(options, create: true) { try await DemoData.load(into: $0) }
        let database = options.databasePath.map { "--database \($0)" } ?? "--data-dir \(options.dataDirectory)"
        return [
            "demo app \(app.id) is ready with schema version \(app.schemaVersion)",
            "mint a token:  tab-server token --app \(app.id) --user alice \(database)",
            "serve it:      tab-server serve \(database)",
        ]
    }

    /// Runs `body` with the database of `options` open, and closes it afterwards, also when `body` throws.
    private static func withStore<T>(_ options: ServiceOptions, create: Bool, _ body: (any TabStoreBackend) async throws -> T) async throws -> T {
        let store = try TabStoreService.openStore(options, create: create)
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// Process-wide setup that must come before any thread uses SQLite: SQLite's page cache layer
    /// (`PageCache`). `tab-server` calls it first thing.
    public static func prepareProcess() {
        _ = PageCache.installed
    }

    /// `serve`: starts the service, logs where it listens, waits until `waitForSignal` returns a signal
    /// number, then drains within the grace period and closes. A second signal during the drain (the operator
    /// does not want to wait) logs `shutdown_forced` and exits at once with 128 + its number, as a shell
    /// reports a process killed by it; acknowledged writes are durable already, the rest rolls back.
    public static func serve(_ options: ServiceOptions, waitForSignal: @escaping @Sendable () async -> Int32) async throws {
        let logger = Logger(minimum: options.logLevel)
        let service = try TabStoreService.start(options: options, logger: logger)
        logger.info("listening", [
            ("host", .string(options.host)), ("port", .integer(service.port)), ("database", .string(options.databaseDescription)),
            ("threads", .integer(options.threads)), ("durability", .string(options.durabilityFull ? "full" : "normal")),
            ("groupCommit", .bool(options.groupCommit)), ("historyRevisions", .integer(options.historyRevisions)),
                ("cacheBytes", .integer(options.cacheBytes)), ("sqliteCacheBytes", .integer(options.sqliteCacheBytes)),
                ("version", .string(TabStoreVersion.current)),
        ])
        if !PageCache.installed {
            logger.warning(
                "sqlite_page_cache_default",
                [
                    (
                        "detail",
                        .string(
                            "SQLite was initialized before tab-server could install its page cache layer; commits after B-tree splits walk the whole page cache"
                        )
                    )
                ])
        }
        let signalNumber = await waitForSignal()
        logger.info("shutdown_started", [("signal", .integer(Int(signalNumber))), ("graceSeconds", .number(options.shutdownGrace))])
        let forced = Task {
            let second = await waitForSignal()
            guard !Task.isCancelled else { return }
            logger.warning("shutdown_forced", [("signal", .integer(Int(second)))])
            exit(128 + second)
        }
        await service.shutdown()
        forced.cancel()
        logger.info("shutdown_complete")
    }
}
