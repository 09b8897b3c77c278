import Foundation
import TabStoreAPI
import TabStoreAuth
import TabStoreHTTP
import TabStorePostgres
import TabStoreServer
import TabStoreStorage
import TabStoreStore
import TabStoreSupport

/// The whole service: store, API and HTTP server, built the same way by `tab-server` and the tests.
public final class TabStoreService: Sendable {
    public let options: ServiceOptions
    package let store: any TabStoreBackend
    package let api: APIResponder
    package let server: HTTPServer
    public let adminToken: String
    /// Held while serving on SQLite: a second server on the same file refuses to start. None on PostgreSQL,
    /// where replicas share the database on purpose.
    let lock: DatabaseLock?

    /// The embedded store when it is the one serving (SQLite-only operations and tests).
    package var sqlite: SQLiteStore? { store as? SQLiteStore }

    /// Checks the options, listens, then opens the database, resolves the admin token and serves.
    ///
    /// The order is deliberate: everything that can fail without side effects (option checks, binding
    /// the port) runs before anything is created on disk, so a bad `--host`, a busy port or a short
    /// token leaves no data folder, database or token file behind. Then the data folder, the
    /// one-server-per-database lock, the database (with a real write: a read-only one is refused here),
    /// and only then the event loops start accepting.
    /// - Throws: `ServiceOptions.Invalid`, `StorageError`, `SystemError` with messages meant for the operator.
    package static func start(options: ServiceOptions, logger: Logger) throws -> TabStoreService {
        try options.validate()
        let configuredToken = try configuredAdminToken(options)
        warnIfTokenFileIsShared(options, logger: logger)
        var server = ServerConfiguration()
        server.host = options.host
        server.port = options.port
        server.eventLoops = options.threads
        server.limits.maxBodyBytes = options.maxBodyBytes
        server.limits.maxHeaderBytes = options.maxHeaderBytes
        server.maxBodyBytesInFlight = options.maxBodyBytesInFlight
        server.maxConnections = options.maxConnections
        server.headerTimeout = options.headerTimeout
        server.bodyTimeout = options.bodyTimeout
        server.idleTimeout = options.idleTimeout
        let listener: ListeningSocket
        do {
            listener = try HTTPServer.listen(server)
        } catch {
            throw ServiceOptions.Invalid(description: "cannot listen on \(options.host):\(options.port): \(String(cString: strerror(error.errno)))")
        }
        var lock: DatabaseLock?
        var store: (any TabStoreBackend)?
        var ownsListener = true
        do {
            if options.databaseURL == nil { lock = try lockDatabase(options) }
            let metrics = Metrics()
            let opened = try openStore(options) { size, seconds in metrics.recordBatch(size: size, seconds: seconds) }
            store = opened
            if let postgres = opened as? PostgresStore {
                logReplication(postgres, logger: logger)
                logReadURL(postgres, logger: logger)
            }
            let adminToken = try configuredToken ?? resolveAdminToken(options, logger: logger)
            let state = ServerState()
            var apiConfiguration = APIConfiguration(adminToken: adminToken)
            apiConfiguration.allowedOrigins = options.corsOrigins
            apiConfiguration.metricsRequireAuth = options.metricsRequireAuth
            apiConfiguration.accessLog = options.accessLog
            apiConfiguration.console = options.console
            apiConfiguration.maxCustomizationBytes = options.maxCustomizationBytes
            apiConfiguration.historyRevisions = options.historyRevisions
            apiConfiguration.auditRetention = options.auditRetention
            apiConfiguration.concurrentHistoryReads = options.historyReads
            apiConfiguration.historyPageCacheBytes = options.historyCacheBytes
            apiConfiguration.representationCacheBytes = options.layoutCacheBytes
            apiConfiguration.tokenCacheBytes = options.tokenCacheBytes
            apiConfiguration.documentCacheBytes = options.documentCacheBytes
            apiConfiguration.feedKeepAliveSeconds = options.feedKeepAliveSeconds
            apiConfiguration.maxFollowersPerUser = options.maxFollowersPerUser
            let api = APIResponder(store: opened, configuration: apiConfiguration, serverState: state, metrics: metrics, logger: logger)
            ownsListener = false  // from here HTTPServer.start owns it (and closes it when it throws)
            let http = try HTTPServer.start(
                configuration: server, listener: listener, responder: api, state: state, observer: metrics, logger: logger)
            return TabStoreService(options: options, store: opened, lock: lock, api: api, server: http, adminToken: adminToken)
        } catch {
            if ownsListener { listener.close() }
            if let store { closeNow(store) }
            lock?.release()
            throw error
        }
    }

    private init(options: ServiceOptions, store: any TabStoreBackend, lock: DatabaseLock?, api: APIResponder, server: HTTPServer, adminToken: String)
    {
        self.options = options
        self.store = store
        self.lock = lock
        self.api = api
        self.server = server
        self.adminToken = adminToken
    }

    /// Creates the data folder (owner-only) and takes the database's lock.
    static func lockDatabase(_ options: ServiceOptions) throws -> DatabaseLock {
        try prepareFolder(of: options)
        return try DatabaseLock(databasePath: options.resolvedDatabasePath)
    }

    /// Creates the database's folder when missing and checks that it is a folder this process can write
    /// (SQLite creates the `-wal` and `-shm` files beside the database).
    private static func prepareFolder(of options: ServiceOptions) throws {
        let folder = (options.resolvedDatabasePath as NSString).deletingLastPathComponent
        guard !folder.isEmpty else { return }
        try DataFolder.prepare(folder, name: options.databasePath == nil ? "--data-dir" : "the folder of --database")
    }

    public var port: Int { server.port }

    /// Graceful shutdown: drain HTTP within the grace period, then finish queued writes and close the database.
    public func shutdown() async {
        // Long polls answer at once instead of holding the drain for up to a minute.
        api.startDraining()
        await server.shutdown(grace: options.shutdownGrace)
        await store.close()
        lock?.release()
    }

    /// Says at start which of the settings that make a failover lossless are in force (docs/postgres.md
    /// "Failover"): a warning when an acknowledged write would not wait for a synchronous standby.
    static func logReplication(_ store: PostgresStore, logger: Logger) {
        guard let replication = store.startupReplication else {
            logger.warning("postgres_replication", [("checked", .string("false")), ("reason", .string("the settings could not be read"))])
            return
        }
        let fields = replication.logFields.map { ($0.0, JSONValue.string($0.1)) }
        if replication.lossless {
            logger.info("postgres_replication", fields)
        } else {
            logger.warning("postgres_replication", fields + [("hint", .string("a failover may lose acknowledged writes: set synchronous_standby_names on the primary and keep synchronous_commit = on (docs/postgres.md#failover)"))])
        }
    }

    /// Says at start what `TAB_SERVER_DATABASE_READ_URL` led to (docs/postgres.md "Reads from standbys"): a hot standby
    /// of the primary's cluster, a server not in recovery, or nothing that answered (a warning: reads go to the primary).
    static func logReadURL(_ store: PostgresStore, logger: Logger) {
        switch store.startupReadURL {
        case nil: return
        case .standby?: logger.info("postgres_read_url", [("server", .string("hot standby of the primary's cluster"))])
        case .notInRecovery?:
            logger.warning("postgres_read_url", [("server", .string("not in recovery (a primary): reads there see everything committed on it")),
                                                 ("hint", .string("name hot standbys; never a primary restarted on its own (docs/postgres.md#reads-from-standbys)"))])
        case .unreachable(let message)?:
            logger.warning("postgres_read_url", [("server", .string("unreachable")), ("error", .string(message)),
                                                 ("hint", .string("reads go to the primary until a standby answers"))])
        }
    }

    /// Closes a store that has not served (start-up failed after it opened).
    static func closeNow(_ store: any TabStoreBackend) {
        if let sqlite = store as? SQLiteStore { sqlite.closeNow() }
        if let postgres = store as? PostgresStore { postgres.closeNow() }
    }

    /// Opens the configured database: PostgreSQL when `databaseURL` is set, else the SQLite file.
    package static func openStore(
        _ options: ServiceOptions, create: Bool = true, onBatch: (@Sendable (Int, Double) -> Void)? = nil
    ) throws -> any TabStoreBackend {
        if let url = options.databaseURL {
            var configuration = PostgresStore.Configuration(url: url)
            configuration.maxConnections = options.databaseConnections
            configuration.acquireTimeout = options.databaseTimeout
            configuration.connectTimeoutSeconds = max(2, Int(options.databaseTimeout.rounded(.up)))  // libpq takes whole seconds, at least 2
            configuration.statementTimeout = options.databaseTimeout
            configuration.readURL = options.databaseReadURL
            return try PostgresStore(configuration: configuration)
        }
        return try openSQLite(options, create: create, onBatch: onBatch)
    }

    /// Opens the SQLite database; with `create` (serve, demo) it creates the database and its folder
    /// when missing, without it (token, backup) a missing database is refused instead of created empty.
    /// - Throws: `ServiceOptions.Invalid` for a missing database or an unusable folder, `StorageError`.
    package static func openSQLite(
        _ options: ServiceOptions, create: Bool = true, onBatch: (@Sendable (Int, Double) -> Void)? = nil
    ) throws -> SQLiteStore {
        let path = options.resolvedDatabasePath
        if create {
            try prepareFolder(of: options)
        } else {
            try DataFolder.requireDatabase(options)
        }
        // The database holds signing secrets: create it owner-only (SQLite gives -wal/-shm the same mode).
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw ServiceOptions.Invalid(description: "cannot create the database file \(path)")
            }
        }
        var configuration = SQLiteStore.Configuration(path: path)
        configuration.synchronousFull = options.durabilityFull
        configuration.groupCommit = options.groupCommit
        // Enough readers that event loops (inline GETs) and the concurrency pool never wait for one.
        configuration.readers = options.threads + System.coreCount + 2
        configuration.recordCacheBytes = options.recordCacheBytes
        configuration.writerPageCacheBytes = options.sqliteCacheBytes
        // A disk that stopped answering gives 503 once a write waited this long, as a PostgreSQL that did.
        configuration.writeTimeout = options.databaseTimeout
        if let onBatch { configuration.onBatch = onBatch }
        return try SQLiteStore(configuration: configuration)
    }

    /// The operator token: the flag or variable, else the token file, else `<data-dir>/admin-token`,
    /// generated on first run (mode 0600). The token itself is never logged, only where it is.
    static func resolveAdminToken(_ options: ServiceOptions, logger: Logger) throws -> String {
        if let token = try configuredAdminToken(options) { return token }
        let path = (options.dataDirectory as NSString).appendingPathComponent("admin-token")
        try DataFolder.prepare(options.dataDirectory, name: "--data-dir")
        let token = Crypto.newSecret()
        // Owner-only from creation (no window at the umask's mode); refuses a symlink or a file that appeared meanwhile.
        do {
            try OwnerOnlyFile.write(path, Array((token + "\n").utf8))
        } catch {
            throw ServiceOptions.Invalid(description: "cannot write the admin token to \(path): \(String(cString: strerror(error.errno)))")
        }
        logger.info("admin_token_generated", [("path", .string(path)), ("hint", .string("read it with: cat \(path)"))])
        return token
    }

    /// The token from the flag, the token file or an existing `<data-dir>/admin-token`; nil when one must be
    /// generated. Only reads, so start-up checks it before creating anything.
    /// A token file others can read is accepted (mounted secrets are often 0444), but said in the log.
    private static func warnIfTokenFileIsShared(_ options: ServiceOptions, logger: Logger) {
        guard options.adminToken == nil else { return }
        let path = options.adminTokenFile ?? (options.dataDirectory as NSString).appendingPathComponent("admin-token")
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { return }
        logger.warning("admin_token_file_shared", [("path", .string(path)), ("mode", .string(String(status.st_mode & 0o777, radix: 8))),
                                                    ("advice", "make it readable by the server's user only (chmod 600)")])
    }

    static func configuredAdminToken(_ options: ServiceOptions) throws -> String? {
        if let token = options.adminToken {
            guard token.utf8.count >= 16 else { throw ServiceOptions.Invalid(description: "the admin token must be at least 16 bytes") }
            return token
        }
        let path = options.adminTokenFile ?? (options.dataDirectory as NSString).appendingPathComponent("admin-token")
        if let data = FileManager.default.contents(atPath: path) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.utf8.count >= 16 else { throw ServiceOptions.Invalid(description: "the admin token in \(path) must be at least 16 bytes") }
            return token
        }
        if options.adminTokenFile != nil { throw ServiceOptions.Invalid(description: "cannot read the admin token file \(path)") }
        return nil
    }
}
