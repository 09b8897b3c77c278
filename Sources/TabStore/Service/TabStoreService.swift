import Foundation

/// The whole service: store, API and HTTP server, built the same way by `tab-server` and the tests.
public final class TabStoreService: Sendable {
    public let options: ServiceOptions
    public let store: SQLiteStore
    public let api: TabStoreAPI
    public let server: HTTPServer
    public let adminToken: String

    /// Opens the database, resolves the admin token and starts listening.
    /// - Throws: `ServiceOptions.Invalid`, `StorageError`, `SystemError` with messages meant for the operator.
    public static func start(options: ServiceOptions, logger: Logger) throws -> TabStoreService {
        try options.validate()
        let store = try openStore(options, onBatch: nil)
        let adminToken = try resolveAdminToken(options, logger: logger)
        let metrics = Metrics()
        let state = ServerState()
        var apiConfiguration = APIConfiguration(adminToken: adminToken)
        apiConfiguration.allowedOrigins = options.corsOrigins
        apiConfiguration.metricsRequireAuth = options.metricsRequireAuth
        apiConfiguration.accessLog = options.accessLog
        let api = TabStoreAPI(store: store, configuration: apiConfiguration, serverState: state, metrics: metrics, logger: logger)
        store.onBatch = { size, seconds in metrics.recordBatch(size: size, seconds: seconds) }
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
        let http: HTTPServer
        do {
            http = try HTTPServer.start(configuration: server, responder: api, state: state, observer: metrics, logger: logger)
        } catch {
            throw ServiceOptions.Invalid(description: "cannot listen on \(options.host):\(options.port): \(error)")
        }
        return TabStoreService(options: options, store: store, api: api, server: http, adminToken: adminToken)
    }

    private init(options: ServiceOptions, store: SQLiteStore, api: TabStoreAPI, server: HTTPServer, adminToken: String) {
        self.options = options
        self.store = store
        self.api = api
        self.server = server
        self.adminToken = adminToken
    }

    public var port: Int { server.port }

    /// Graceful shutdown: drain HTTP within the grace period, then finish queued writes and close the database.
    public func shutdown() async {
        await server.shutdown(grace: options.shutdownGrace)
        await store.close()
    }

    /// Opens (creating its folder) the configured database.
    public static func openStore(_ options: ServiceOptions, onBatch: (@Sendable (Int, Double) -> Void)?) throws -> SQLiteStore {
        let path = options.resolvedDatabasePath
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
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
        if let onBatch { configuration.onBatch = onBatch }
        return try SQLiteStore(configuration: configuration)
    }

    /// The operator token: the flag or variable, else the token file, else `<data-dir>/admin-token`,
    /// generated on first run (mode 0600). The token itself is never logged, only where it is.
    static func resolveAdminToken(_ options: ServiceOptions, logger: Logger) throws -> String {
        if let token = options.adminToken {
            guard token.count >= 16 else { throw ServiceOptions.Invalid(description: "the admin token must be at least 16 characters") }
            return token
        }
        let path = options.adminTokenFile ?? (options.dataDirectory as NSString).appendingPathComponent("admin-token")
        if let data = FileManager.default.contents(atPath: path) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.count >= 16 else { throw ServiceOptions.Invalid(description: "the admin token in \(path) must be at least 16 characters") }
            return token
        }
        if options.adminTokenFile != nil { throw ServiceOptions.Invalid(description: "cannot read the admin token file \(path)") }
        try FileManager.default.createDirectory(atPath: options.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let token = Crypto.newSecret()
        guard FileManager.default.createFile(atPath: path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ServiceOptions.Invalid(description: "cannot write the admin token to \(path)")
        }
        logger.info("admin_token_generated", [("path", .string(path)), ("hint", .string("read it with: cat \(path)"))])
        return token
    }
}
