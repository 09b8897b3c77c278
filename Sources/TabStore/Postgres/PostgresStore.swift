import CPostgres
import Foundation
import TabStoreStore
import TabStoreSupport

/// The store on PostgreSQL (`TAB_SERVER_DATABASE_URL`), for several replicas sharing one database.
///
/// Every guarantee of `SQLiteStore` holds across processes: a write commits before it is acknowledged;
/// compare-and-set is a row lock (`SELECT … FOR UPDATE`) plus a conditional write (`UPDATE … WHERE revision =`,
/// `INSERT … ON CONFLICT DO NOTHING`), so two replicas never both win; the history row and the idempotent
/// answer commit in the write's transaction. It keeps no cache of customizations (another replica may change
/// any row), so it does not offer `SynchronousPointReads`: every read goes through the pool, off the event loops.
package final class PostgresStore: TabStoreBackend {
    package struct Configuration: Sendable {
        /// A `postgres://` or `postgresql://` URL, or a libpq `key=value` string.
        package var url: String
        package var maxConnections = 10
        package var acquireTimeout = 5.0
        package var connectTimeoutSeconds = 5
        /// Seconds one statement may take (`PostgresConnection.statementDeadline`, and the session's server-side
        /// timeouts); nil: unbounded.
        package var statementTimeout: Double? = 5
        /// The id this process signs its change notifications with, so it skips its own: unique per process.
        /// (A test gives a second store the same one to write what the first never hears of.)
        package var sender = UUID().uuidString
        /// Hot standbys for reads that may lag (`TAB_SERVER_DATABASE_READ_URL`, libpq syntax, several hosts allowed);
        /// nil: every read on `url`.
        package var readURL: String?

        package init(url: String) { self.url = url }
    }

    let pool: PostgresPool
    /// This process's id in change notifications, so it skips its own.
    let sender: String
    let listener: PostgresListener
    /// Hot standbys for reads that may lag (`Configuration.readURL`), and what decides when they may answer.
    let readPool: PostgresPool?
    let routing: PostgresReadRouting?
    /// The replication settings in force when the store opened (`PostgresReplication`), for the start-up log.
    package let startupReplication: PostgresReplication?
    /// What the read URL led to when the store opened (`Configuration.readURL`), for the start-up log: nil without one.
    package let startupReadURL: ReadURLCheck?

    /// Connects once to check the database (reachable, credentials, exists, UTF-8), migrates it under the
    /// advisory lock, then keeps a pool that opens connections as requests need them.
    /// - Throws: `ConfigurationError` that says what is wrong without printing the password.
    package init(configuration: Configuration) throws {
        let target = Self.describe(configuration.url)
        try Self.checkSyntax(configuration.url, variable: "TAB_SERVER_DATABASE_URL (--database-url)")
        let primarySystem: String
        let db: PostgresConnection
        do {
            db = try PostgresConnection(conninfo: configuration.url, connectTimeoutSeconds: configuration.connectTimeoutSeconds)
        } catch {
            throw ConfigurationError(description: "cannot connect to PostgreSQL (TAB_SERVER_DATABASE_URL: \(target)): \(error.message)")
        }
        do {
            let encoding = try db.query("SELECT current_setting('server_encoding')").text(0, 0)
            guard encoding == "UTF8" else {
                throw ConfigurationError(description: "the PostgreSQL database (\(target)) uses the encoding \(encoding); TabStore needs UTF8 (CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0)")
            }
            try PostgresMigrations.migrate(db, now: Timestamp.now())
            startupReplication = try? PostgresReplication.read(db)
            if let readURL = configuration.readURL {
                // A standby serves only if it is a copy of this cluster (the same system identifier). (And none serves
                // before the listener listens: `PostgresReadRouting.listening`.)
                primarySystem = try db.query(Self.systemIdentifier).text(0, 0)
                startupReadURL = try Self.checkReadURL(readURL, primarySystem: primarySystem,
                                                       connectTimeoutSeconds: configuration.connectTimeoutSeconds)
            } else {
                (primarySystem, startupReadURL) = ("", nil)
            }
        } catch let error as PostgresFailure {
            throw ConfigurationError(description: "cannot prepare the PostgreSQL database (\(target)): \(error.message)")
        }
        var settings = PostgresPool.Settings(conninfo: configuration.url)
        settings.maxConnections = max(1, configuration.maxConnections)
        settings.acquireTimeout = configuration.acquireTimeout
        settings.connectTimeoutSeconds = configuration.connectTimeoutSeconds
        settings.statementTimeout = configuration.statementTimeout
        pool = PostgresPool(settings: settings)
        sender = configuration.sender
        if let readURL = configuration.readURL {
            var readSettings = settings
            readSettings.conninfo = readURL
            // Half the bound for the standby, so a standby that stops answering leaves the other half for the primary.
            readSettings.statementTimeout = settings.statementTimeout.map { $0 / 2 }
            readSettings.acquireTimeout = settings.acquireTimeout / 2
            readPool = PostgresPool(settings: readSettings)
            routing = PostgresReadRouting(primarySystem: primarySystem)
        } else {
            readPool = nil
            routing = nil
        }
        listener = PostgresListener(conninfo: configuration.url, sender: sender, probeSeconds: configuration.statementTimeout ?? 5, routing: routing)
    }

    /// Other replicas' commits, from a connection that `LISTEN`s (see `PostgresNotifications`).
    package func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        listener.add(handler)
    }

    /// Tells the other replicas about `change` when the transaction on `db` commits.
    func notify(_ db: PostgresConnection, _ change: StoreChange) throws {
        if routing != nil, case .customization(let appId, let userId) = change { db.changedUsers.append((appId, userId)) }
        try PostgresNotifications.notify(db, change, sender: sender)
    }

    /// Where a connection string points (host, port, database, user), never its password.
    package static func describe(_ conninfo: String) -> String {
        guard let options = PQconninfoParse(conninfo, nil) else { return "an unparsable connection string" }
        defer { PQconninfoFree(options) }
        var found: [String: String] = [:]
        var index = 0
        while let keyword = options[index].keyword {
            if let value = options[index].val { found[String(cString: keyword)] = String(cString: value) }
            index += 1
        }
        let host = found["host"] ?? found["hostaddr"] ?? "the default socket"
        return
            "host \(host), port \(found["port"] ?? "5432"), database \(found["dbname"] ?? found["user"] ?? "(default)"), user \(found["user"] ?? "(default)")"
    }

    /// Runs `body` in one transaction, again (up to 5 times) when it lost a race the database reported as a
    /// serialization failure or deadlock, or that a conditional write found (`LostRace`).
    func transaction<T: Sendable>(begin: String = "BEGIN", _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await pool.run { db in
            var attempt = 0
            while true {
                db.changedUsers = []
                try db.execute(begin)
                do {
                    let value = try body(db)
                    try db.execute("COMMIT")
                    Self.notePositions(db, routing: self.routing)
                    return value
                } catch {
                    if !db.isBroken { try? db.execute("ROLLBACK") }
                    let retry = (error as? PostgresFailure)?.isRetryable == true || error is LostRace
                    guard retry, attempt < 5 else {
                        // Still losing after five runs: the client may retry later (503), never a 500.
                        if retry { throw StorageError(unavailable: "write contention", message: "a write lost to concurrent writes 6 times") }
                        throw error
                    }
                    attempt += 1
                }
            }
        }
    }

    /// A conditional write matched no row: another writer committed first; the transaction runs again.
    struct LostRace: Error {}

    package func close() async { closeNow() }

    /// Closes without waiting (start-up failures); connections in use close when they come back.
    package func closeNow() {
        listener.stop()
        pool.close()
        readPool?.close()
    }

    // MARK: - Apps

    private static let appColumns = "id, name, signing_secret, created_at, schema_version, schema_version_floor, minimum_schema_version, minimum_applied"

    private static func appRow(_ rows: PostgresRows, _ row: Int) -> AppRecord {
        AppRecord(id: rows.text(row, 0), name: rows.text(row, 1), signingSecret: rows.text(row, 2), createdAt: rows.text(row, 3),
                  schemaVersion: rows.int(row, 4), schemaVersionFloor: rows.int(row, 5),
                  minimumSchemaVersion: rows.int(row, 6), minimumApplied: rows.int(row, 7))
    }

    package func createApp(id: String, name: String, signingSecret: String, createdAt: String) async throws -> AppRecord {
        // An earlier app with this id used versions up to its floor: this one never reuses them.
        let rows = try await transaction { db in
            let rows = try db.query("""
                INSERT INTO apps (id, name, signing_secret, created_at, schema_version, schema_version_floor)
                SELECT $1, $2, $3, $4, 0, COALESCE((SELECT last_schema_version FROM retired_apps WHERE id = $1), 0)
                ON CONFLICT (id) DO NOTHING RETURNING schema_version_floor
                """, [.text(id), .text(name), .text(signingSecret), .text(createdAt)])
            if rows.count == 1 { try self.notify(db, .app(appId: id)) }
            return rows
        }
        guard rows.count == 1 else { throw StoreConflict.alreadyExists }
        return AppRecord(id: id, name: name, signingSecret: signingSecret, createdAt: createdAt, schemaVersion: 0, schemaVersionFloor: rows.int(0, 0))
    }

    package func app(_ id: String) async throws -> AppRecord? {
        let rows = try await pool.run { db in try db.query("SELECT \(Self.appColumns) FROM apps WHERE id = $1", [.text(id)]) }
        return rows.count > 0 ? Self.appRow(rows, 0) : nil
    }

    package func listApps(after cursor: String?, limit: Int) async throws -> [AppRecord] {
        let rows = try await pool.run { db in
            try db.query("SELECT \(Self.appColumns) FROM apps WHERE id > $1 ORDER BY id LIMIT $2", [.text(cursor ?? ""), .integer(max(0, limit))])
        }
        return (0..<rows.count).map { Self.appRow(rows, $0) }
    }

    package func deleteApp(_ id: String) async throws -> Bool {
        try await transaction { db in
            // The id keeps its last schema version, in the same transaction as the delete (see PostgresMigrations).
            try db.query("""
                INSERT INTO retired_apps (id, last_schema_version)
                SELECT id, GREATEST(schema_version, schema_version_floor) FROM apps WHERE id = $1
                ON CONFLICT (id) DO UPDATE SET last_schema_version = GREATEST(retired_apps.last_schema_version, excluded.last_schema_version)
                """, [.text(id)])
            let deleted = try db.query("DELETE FROM apps WHERE id = $1", [.text(id)]).affected > 0
            if deleted { try self.notify(db, .appDeleted(appId: id)) }
            return deleted
        }
    }

    package func rotateSecret(appId: String, signingSecret: String) async throws {
        let changed = try await transaction { db in
            let changed = try db.query("UPDATE apps SET signing_secret = $1 WHERE id = $2", [.text(signingSecret), .text(appId)]).affected
            if changed > 0 { try self.notify(db, .secretRotated(appId: appId)) }
            return changed
        }
        if changed == 0 { throw StoreConflict.notFound }
    }

    package func setMinimumSchemaVersion(appId: String, minimum: Int) async throws -> AppRecord {
        try await transaction { db in
            let rows = try db.query("SELECT \(Self.appColumns) FROM apps WHERE id = $1 FOR UPDATE", [.text(appId)])
            guard rows.count > 0 else { throw StoreConflict.notFound }
            let app = Self.appRow(rows, 0)
            guard minimum >= app.minimumApplied else { throw StoreConflict.minimumApplied(current: app.minimumApplied) }
            guard minimum <= app.schemaVersion else { throw StoreConflict.revisionMismatch(current: app.schemaVersion) }
            if minimum != app.minimumSchemaVersion {
                try db.query("UPDATE apps SET minimum_schema_version = $1 WHERE id = $2", [.integer(minimum), .text(appId)])
                // Other replicas drop their cached app (its supported versions changed).
                try self.notify(db, .schema(appId: appId))
            }
            return AppRecord(id: app.id, name: app.name, signingSecret: app.signingSecret, createdAt: app.createdAt, schemaVersion: app.schemaVersion,
                             schemaVersionFloor: app.schemaVersionFloor, minimumSchemaVersion: minimum, minimumApplied: app.minimumApplied)
        }
    }

    package func noteMinimumApplied(appId: String, minimum: Int) async throws -> Bool {
        try await transaction { db in
            try db.query("UPDATE apps SET minimum_applied = GREATEST(minimum_applied, $1) WHERE id = $2 AND minimum_schema_version >= $1",
                         [.integer(minimum), .text(appId)]).affected > 0
        }
    }

    // MARK: - Customizations

    static let selectCustomization =
        "SELECT revision, schema_version, document, updated_at FROM customizations WHERE app_id = $1 AND user_id = $2"

    /// The user's row; `lock` takes its row lock until the transaction ends (compare-and-set).
    static func customizationRow(_ db: PostgresConnection, appId: String, userId: String, lock: Bool = false) throws -> CustomizationRecord? {
        let rows = try db.query(selectCustomization + (lock ? " FOR UPDATE" : ""), [.text(appId), .text(userId)])
        guard rows.count > 0 else { return nil }
        return CustomizationRecord(appId: appId, userId: userId, revision: rows.int(0, 0), schemaVersion: rows.int(0, 1),
                                   document: rows.bytes(0, 2), updatedAt: rows.text(0, 3))
    }

    package func customization(appId: String, userId: String) async throws -> CustomizationRecord? {
        try await pool.run { db in try Self.customizationRow(db, appId: appId, userId: userId) }
    }

    /// Stores `next` only if the row is still at `expected` (0: there is none): the conditional write that,
    /// beside the row lock, makes sure no replica's concurrent write is overwritten.
    /// - Throws: `LostRace` when another write committed first, `StoreConflict.notFound` when the app is gone.
    /// First in a write's transaction: the app it was validated under is still there, and still the same one.
    /// The row is key-share locked until the commit, so it cannot be deleted under the write (a delete then waits,
    /// and removes what the write stored); a write in the window between a delete and a creation under the same
    /// id finds no row, and a write validated under the old app names a version at or below the new app's floor
    /// (its versions start above the old one's).
    /// - Throws: `StoreConflict.notFound` (404) when the app is gone or is another one now.
    static func lockApp(_ db: PostgresConnection, _ appId: String, writtenUnder: Int?) throws {
        guard let floor = try db.query("SELECT schema_version_floor FROM apps WHERE id = $1 FOR KEY SHARE", [.text(appId)]).scalarInt else {
            throw StoreConflict.notFound
        }
        if let writtenUnder, floor > 0, writtenUnder <= floor { throw StoreConflict.notFound }
    }

    static func writeRevision(_ db: PostgresConnection, _ next: CustomizationRecord, expected: Int) throws {
        do {
            let changed: Int
            if expected == 0 {
                changed = try db.query("""
                    INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at)
                    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app_id, user_id) DO NOTHING
                    """, [.text(next.appId), .text(next.userId), .integer(next.revision), .integer(next.schemaVersion),
                          .bytes(next.document), .text(next.updatedAt)]).affected
            } else {
                changed = try db.query("""
                    UPDATE customizations SET revision = $3, schema_version = $4, document = $5, updated_at = $6
                    WHERE app_id = $1 AND user_id = $2 AND revision = $7
                    """, [.text(next.appId), .text(next.userId), .integer(next.revision), .integer(next.schemaVersion),
                          .bytes(next.document), .text(next.updatedAt), .integer(expected)]).affected
            }
            if changed != 1 { throw LostRace() }
        } catch let failure as PostgresFailure where failure.isForeignKeyViolation {
            throw StoreConflict.notFound  // the app was deleted meanwhile
        }
    }

    package func updateCustomization(
        appId: String, userId: String, expectedRevision: Int?,
        change: @escaping @Sendable (CustomizationRecord?) throws -> CustomizationRecord?
    ) async throws -> CustomizationRecord? {
        try await transaction { db in
            try Self.lockApp(db, appId, writtenUnder: nil)
            let current = try Self.customizationRow(db, appId: appId, userId: userId, lock: true)
            if let expectedRevision, expectedRevision != (current?.revision ?? 0) {
                throw StoreConflict.revisionMismatch(current: current?.revision ?? 0)
            }
            guard let next = try change(current) else { return current }
            try Self.lockApp(db, appId, writtenUnder: next.writtenUnder)  // the version the record was made under
            try Self.writeRevision(db, next, expected: current?.revision ?? 0)
            try self.notify(db, .customization(appId: appId, userId: userId))
            return next
        }
    }

    package func deleteCustomization(appId: String, userId: String, expectedRevision: Int?) async throws -> Bool {
        try await transaction { db in
            if let expectedRevision {
                let current = try Self.customizationRow(db, appId: appId, userId: userId, lock: true)?.revision ?? 0
                if current != expectedRevision { throw StoreConflict.revisionMismatch(current: current) }
            }
            let deleted = try db.query("DELETE FROM customizations WHERE app_id = $1 AND user_id = $2", [.text(appId), .text(userId)]).affected > 0
            if deleted { try self.notify(db, .customization(appId: appId, userId: userId)) }
            return deleted
        }
    }

    /// Rows per page of `forEachCustomization`.
    static let customizationPage = 500

    /// Every customization of the app from one snapshot (a read-only repeatable-read transaction), read in pages
    /// of `customizationPage` by user id, so an app of a million users never sits in memory at once; `body`
    /// runs between pages, off the pool's queue.
    package func forEachCustomization(appId: String, _ body: (CustomizationRecord) throws -> Void) async throws {
        try await pool.session { session in
            try await session.run { db in try db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") }
            var after = ""  // ids are never empty: "" is below every one
            while true {
                let cursor = after
                let rows = try await session.run { db in
                    try db.query("""
                        SELECT revision, schema_version, document, updated_at, user_id FROM customizations
                        WHERE app_id = $1 AND user_id > $2 ORDER BY user_id LIMIT $3
                        """, [.text(appId), .text(cursor), .integer(Self.customizationPage)])
                }
                for row in 0..<rows.count {
                    try body(CustomizationRecord(appId: appId, userId: rows.text(row, 4), revision: rows.int(row, 0), schemaVersion: rows.int(row, 1),
                                                 document: rows.bytes(row, 2), updatedAt: rows.text(row, 3)))
                }
                guard rows.count == Self.customizationPage else { break }
                after = rows.text(rows.count - 1, 4)
            }
            try await session.run { db in try db.execute("COMMIT") }
        }
    }

    /// Counted by the database (other replicas write too); `/metrics` calls it once per scrape.
    package func customizationCount() async throws -> Int {
        try await pool.run { db in try db.query("SELECT count(*) FROM customizations").scalarInt ?? 0 }
    }

    package func historyCount() async throws -> Int {
        try await pool.run { db in try db.query("SELECT count(*) FROM customization_history").scalarInt ?? 0 }
    }

    /// The replication settings in force now (a failover changes them), nil when the database does not answer.
    package func replication() async -> PostgresReplication? {
        try? await pool.run { db in try PostgresReplication.read(db) }
    }

    package func backendGauges() async -> [BackendGauge] { (await replication()?.gauges ?? []) + (routing?.gauges ?? []) }

    package func ping() async -> Bool {
        (try? await pool.run { db in try db.query("SELECT 1").scalarInt }) == 1
    }

    package func backup(to path: String) async throws {
        throw ConfigurationError(description: "the database is PostgreSQL (TAB_SERVER_DATABASE_URL): back it up with pg_dump, e.g. pg_dump --format=custom --file=tabstore.dump \"$TAB_SERVER_DATABASE_URL\" (or your provider's point-in-time recovery); tab-server backup copies only the embedded SQLite database")
    }
}
