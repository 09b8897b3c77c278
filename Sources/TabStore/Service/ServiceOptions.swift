import Foundation
import TabStoreAuth
import TabStoreServer
import TabStoreSupport

/// Every setting of `tab-server`, from flags or the same names as `TAB_SERVER_…` environment variables
/// (a flag wins over the environment).
public struct ServiceOptions: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDirectory = "./data"
    public var databasePath: String?
    /// PostgreSQL instead of the SQLite file: a `postgres://` or `postgresql://` URL in libpq syntax.
    public var databaseURL: String?
    /// Hot standbys for reads that may lag (GET of a customization), libpq syntax; nil: every read on the primary.
    public var databaseReadURL: String?
    /// Connections each server keeps to PostgreSQL at most.
    public var databaseConnections = 10
    /// Seconds any one PostgreSQL call may take (a statement, waiting for a pooled connection, connecting): past it
    /// the request gets 503 with Retry-After and the connection is discarded.
    public var databaseTimeout = 5.0
    public var adminToken: String?
    public var adminTokenFile: String?
    public var threads = System.coreCount
    public var durabilityFull = true
    public var groupCommit = true
    public var maxBodyBytes = 1024 * 1024
    public var maxHeaderBytes = 64 * 1024
    public var maxCustomizationBytes = 64 * 1024
    public var maxBodyBytesInFlight = 64 << 20
    public var maxConnections = 16_384
    public var headerTimeout = 10.0
    public var bodyTimeout = 30.0
    public var idleTimeout = 60.0
    public var shutdownGrace = 10.0
    public var corsOrigins: [String] = []
    public var metricsRequireAuth = false
    public var accessLog = true
    /// Serve the operator console at `/console` (docs/console.md).
    public var console = true
    /// Revisions kept per user in the history; 0 keeps none.
    public var historyRevisions = 100
    public var auditRetention = 100_000
    /// History pages and exports read and rendered at once, over all users (`HistoryReads`): half the cores, so a
    /// flood of them never takes every core, read connection or database connection writes need.
    public var historyReads = max(1, System.coreCount / 2)
    /// Bytes of rendered history pages kept (a page is up to about 1 MiB); 0 renders every page.
    public var historyCacheBytes = 16 << 20
    /// Bytes of memory for the caches (the shares below); 0 turns them all off. 12 MiB beside the 16 MiB of
    /// `sqliteCacheBytes` keep the server under 96 MB resident with a million users under load
    /// (bench/results/issue16.md, "RSS"); a thousand users' working set fits many times over.
    public var cacheBytes = 12 << 20
    /// Bytes of SQLite's page cache on the embedded store's writer connection (its B-tree pages stay in memory
    /// between writes); each reader keeps 1 MiB (`SQLiteStore.Configuration.readerPageCacheBytes`: every commit empties it).
    public var sqliteCacheBytes = 16 << 20
    /// Seconds between keep-alive comments on change-feed streams (tests shorten it; not a flag).
    package var feedKeepAliveSeconds = 12.0
    /// Change-feed streams and long polls one user may have open at once (not a flag).
    package var maxFollowersPerUser = 32
    package var logLevel = Logger.Level.info

    public init() {}

    /// The shares of `cacheBytes`.
    package var recordCacheBytes: Int { cacheBytes / 8 * 3 }
    package var documentCacheBytes: Int { cacheBytes / 8 }
    package var layoutCacheBytes: Int { cacheBytes / 4 }
    package var tokenCacheBytes: Int { cacheBytes - recordCacheBytes - documentCacheBytes - layoutCacheBytes }

    /// A short description of where the data lives, for logs (never a password).
    package var databaseDescription: String {
        databaseURL == nil ? resolvedDatabasePath : "PostgreSQL (TAB_SERVER_DATABASE_URL)"
    }

    /// The SQLite file: `--database`, else `tabstore.sqlite` in the data directory.
    public var resolvedDatabasePath: String { databasePath ?? (dataDirectory as NSString).appendingPathComponent("tabstore.sqlite") }

    /// Checks settings against each other.
    /// - Throws: `Invalid` naming the settings that disagree.
    public func validate() throws {
        guard SocketAddress(host: host, port: 0) != nil else {
            throw Invalid(description: "--host must be an IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0 or ::, or localhost, got \"\(host)\"")
        }
        guard maxBodyBytesInFlight >= maxBodyBytes else {
            throw Invalid(description: "--max-body-bytes-in-flight (\(maxBodyBytesInFlight)) must be at least --max-body-bytes (\(maxBodyBytes))")
        }
    }

    /// A configuration problem that stops start-up with a clear message.
    package typealias Invalid = ConfigurationError

    /// One setting: its flag, environment name, meaning, and how to apply a value.
    struct Setting: Sendable {
        let flag: String
        let help: String
        let apply: @Sendable (inout ServiceOptions, String) throws -> Void

        var environmentName: String { "TAB_SERVER_" + flag.uppercased().replacing("-", with: "_") }
    }

    static func integer(_ flag: String, _ range: ClosedRange<Int>, _ value: String) throws -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw Invalid(description: "--\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(value)\"")
        }
        return number
    }

    static func seconds(_ flag: String, _ value: String) throws -> Double {
        guard let number = Double(value), number > 0, number <= 86_400 else {
            throw Invalid(description: "--\(flag) must be a number of seconds greater than 0, got \"\(value)\"")
        }
        return number
    }

    static func boolean(_ flag: String, _ value: String) throws -> Bool {
        switch value.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw Invalid(description: "--\(flag) must be true or false, got \"\(value)\"")
        }
    }

    static let settings: [Setting] = [
        Setting(flag: "host", help: "address to listen on (default 127.0.0.1; 0.0.0.0 in the container)") { $0.host = $1 },
        Setting(flag: "port", help: "TCP port (default 8080; 0 picks a free one)") { $0.port = try integer("port", 0...65535, $1) },
        Setting(flag: "data-dir", help: "folder for the database and the generated admin token (default ./data)") { $0.dataDirectory = $1 },
        Setting(flag: "database", help: "SQLite file (default <data-dir>/tabstore.sqlite)") { $0.databasePath = $1 },
        Setting(
            flag: "database-url",
            help: "PostgreSQL instead of the SQLite file: postgres://user:password@host:port/database (libpq syntax and parameters)"
        ) { options, value in
            guard !value.isEmpty else { return }
            guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                throw Invalid(description: "--database-url must be a postgres:// or postgresql:// URL")
            }
            options.databaseURL = value
        },
        Setting(flag: "database-read-url", help: "hot standbys for GETs of a customization that may lag (never older than a client's own write or named revision): postgres://… (libpq syntax, several hosts allowed); off by default") { options, value in
            guard !value.isEmpty else { return }
            guard value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                throw Invalid(description: "--database-read-url must be a postgres:// or postgresql:// URL")
            }
            options.databaseReadURL = value
        },
        Setting(flag: "database-connections", help: "PostgreSQL connections per server at most (default 10)") {
            $0.databaseConnections = try integer("database-connections", 1...1000, $1)
        },
        Setting(
            flag: "database-timeout",
            help: "seconds a request's database work may take before it gets 503: PostgreSQL, or SQLite's writer (default 5)"
        ) {
            $0.databaseTimeout = try seconds("database-timeout", $1)
        },
        Setting(flag: "admin-token", help: "the operator's bearer token") { $0.adminToken = $1 },
        Setting(flag: "admin-token-file", help: "file holding the operator's bearer token") { $0.adminTokenFile = $1 },
        Setting(flag: "threads", help: "event-loop threads (default: one per core)") { $0.threads = try integer("threads", 1...256, $1) },
        Setting(flag: "durability", help: "full (default: every acknowledged write survives power loss) or normal") { options, value in
            switch value {
            case "full": options.durabilityFull = true
            case "normal": options.durabilityFull = false
            default: throw Invalid(description: "--durability must be full or normal, got \"\(value)\"")
            }
        },
        Setting(flag: "group-commit", help: "commit concurrent writes together (default true)") { $0.groupCommit = try boolean("group-commit", $1) },
        Setting(flag: "max-body-bytes", help: "largest request body (default 1048576)") {
            $0.maxBodyBytes = try integer("max-body-bytes", 1024...(64 << 20), $1)
        },
        Setting(
            flag: "max-body-bytes-in-flight",
            help:
                "request body bytes received or handled at once, over all connections, counted as they arrive; more gets 503 (default 67108864, at least max-body-bytes)"
        ) {
            $0.maxBodyBytesInFlight = try integer("max-body-bytes-in-flight", 1024...(1 << 40), $1)
        },
        Setting(flag: "max-header-bytes", help: "largest request header section (default 65536)") {
            $0.maxHeaderBytes = try integer("max-header-bytes", 1024...(1 << 20), $1)
        },
        Setting(flag: "max-customization-bytes", help: "largest stored customization document (default 65536)") {
            $0.maxCustomizationBytes = try integer("max-customization-bytes", 4096...(8 << 20), $1)
        },
        Setting(flag: "max-connections", help: "open connections before new ones get 503 (default 16384)") {
            $0.maxConnections = try integer("max-connections", 1...1_000_000, $1)
        },
        Setting(flag: "header-timeout", help: "seconds to receive a request head, from accept for a connection's first (default 10)") {
            $0.headerTimeout = try seconds("header-timeout", $1)
        },
        Setting(flag: "body-timeout", help: "seconds to receive a request body (default 30)") { $0.bodyTimeout = try seconds("body-timeout", $1) },
        Setting(flag: "idle-timeout", help: "seconds an idle keep-alive connection stays open (default 60)") {
            $0.idleTimeout = try seconds("idle-timeout", $1)
        },
        Setting(flag: "shutdown-grace", help: "seconds in-flight requests get on SIGTERM (default 10)") {
            $0.shutdownGrace = try seconds("shutdown-grace", $1)
        },
        Setting(flag: "cors-origins", help: "comma-separated origins allowed from browsers, or * (default none)") { options, value in
            options.corsOrigins = value.split(separator: ",").map { $0.trimmingOWS() }.map(String.init).filter { !$0.isEmpty }
        },
        Setting(flag: "metrics-auth", help: "require the operator token for /metrics (default false)") {
            $0.metricsRequireAuth = try boolean("metrics-auth", $1)
        },
        Setting(flag: "access-log", help: "one JSON log line per request (default true)") { $0.accessLog = try boolean("access-log", $1) },
        Setting(flag: "console", help: "serve the operator console at /console (default true)") { $0.console = try boolean("console", $1) },
        Setting(flag: "history-revisions", help: "revisions kept per user for history and revert (default 100; 0 keeps none)") {
            $0.historyRevisions = try integer("history-revisions", 0...10_000, $1)
        },
        Setting(flag: "audit-retention", help: "audit log entries kept; each new one removes the oldest past it (default 100000)") {
            $0.auditRetention = try integer("audit-retention", 1...100_000_000, $1)
        },
        Setting(
            flag: "history-reads",
            help: "history pages and exports read at once, over all users; one per user at a time (default: half the cores, at least 1)"
        ) {
            $0.historyReads = try integer("history-reads", 1...256, $1)
        },
        Setting(flag: "history-cache-bytes", help: "memory for rendered history pages, in bytes (default 16777216; 0 turns it off)") {
            $0.historyCacheBytes = try integer("history-cache-bytes", 0...(1 << 40), $1)
        },
        Setting(
            flag: "cache-bytes",
            help: "memory for the caches of customizations, layouts and verified tokens, in bytes (default 12582912; 0 turns them off)"
        ) {
            $0.cacheBytes = try integer("cache-bytes", 0...(1 << 40), $1)
        },
        Setting(
            flag: "sqlite-cache-bytes", help: "SQLite page cache of the embedded store's writer, in bytes (default 16777216; readers keep 1 MiB each)"
        ) {
            $0.sqliteCacheBytes = try integer("sqlite-cache-bytes", 0...(1 << 40), $1)
        },
        Setting(flag: "log-level", help: "debug, info, warning or error (default info)") { options, value in
            guard let level = Logger.Level(name: value) else {
                throw Invalid(description: "--log-level must be debug, info, warning or error, got \"\(value)\"")
            }
            options.logLevel = level
        },
    ]

    /// Applies the environment, then `--flag value` / `--flag=value` arguments; returns the arguments left.
    /// - Throws: `Invalid` for an unknown flag, a missing value or a bad value.
    public static func parse(_ arguments: [String], environment: [String: String]) throws -> (ServiceOptions, [String]) {
        var options = ServiceOptions()
        for setting in settings {
            if let value = environment[setting.environmentName] {
                do { try setting.apply(&options, value) } catch let error as Invalid {
                    throw Invalid(description: "\(setting.environmentName): \(error.description)")
                }
            }
        }
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument != "--help", argument != "--version" else {
                rest.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let setting = settings.first(where: { $0.flag == name }) else {
                rest.append(argument)  // a subcommand's own flag (--app, --user, --ttl)
                if value == nil, index < arguments.count, !arguments[index].hasPrefix("--") {
                    rest.append(arguments[index])
                    index += 1
                }
                continue
            }
            if value == nil {
                guard index < arguments.count else { throw Invalid(description: "--\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            try setting.apply(&options, value!)
        }
        try options.validate()
        return (options, rest)
    }

    public static var helpText: String {
        var text = """
            tab-server \(TabStoreVersion.current): the TabStore HTTP service

            Usage:
              tab-server [serve] [options]          run the service (default)
              tab-server token --app ID --user ID [--ttl SECONDS]
                                                    mint a user JWT for development (reads the app's secret)
              tab-server backup PATH [options]      write a consistent online copy of the (existing) database to PATH
              tab-server healthcheck [options]      exit 0 when GET /healthz on host:port answers 200
              tab-server demo [options]             create the demo app com.myApp with examples/schema.json, then exit
              tab-server -h | --help                this text
              tab-server -v | --version             the version

            token, backup and demo work on the server's database: pass the same --data-dir (or --database).

            Options (each also read from the environment variable shown):

            """
        // Wide enough for the longest flag, so no name runs into its environment variable.
        let width = (settings.map { "  --\($0.flag) VALUE".count }.max() ?? 0) + 2
        for setting in settings {
            let flag = "  --\(setting.flag) VALUE"
            text += flag + String(repeating: " ", count: width - flag.count)
            text += "\(setting.environmentName)\n" + String(repeating: " ", count: width) + "\(setting.help)\n"
        }
        return text
    }
}

public enum TabStoreVersion {
    public static let current = "1.2.0"
}
