import CSQLite
import Foundation
import TabStoreStore
import TabStoreSupport

/// The embedded store: one SQLite file, one group-committing writer, a pool of readers.
package final class SQLiteStore: TabStoreBackend, SynchronousPointReads {
    package struct Configuration: Sendable {
        package var path: String
        /// `synchronous=FULL` (default): an acknowledged write survives power loss.
        package var synchronousFull = true
        package var readers = 4
        /// Commit concurrent writes together; off commits each write alone (for comparison).
        package var groupCommit = true
        package var maxBatch = 256
        /// Bytes of stored customizations kept in memory (`RecordCache`); 0 reads every one from the file.
        package var recordCacheBytes = 24 << 20
        /// SQLite's page cache on the writer: the B-tree pages writes go through stay in memory, instead of
        /// being read from the file again (at 10,000 users, a keyed PATCH read a page from the file on most
        /// writes with SQLite's default of 2 MB).
        package var writerPageCacheBytes = 16 << 20
        /// SQLite's page cache on each reader: small, since every commit empties it (WAL mode).
        package var readerPageCacheBytes = 1 << 20
        /// Called after each committed batch with its size and commit time (metrics).
        package var onBatch: @Sendable (Int, Double) -> Void = { _, _ in }
        /// Seconds a write's caller waits from its request's arrival (`WriteQueue.bound`); nil: unbounded.
        package var writeTimeout: Double?

        package init(path: String) { self.path = path }
    }

    /// Used by this type's extensions (`SQLiteStore+History`) too.
    let writer: WriteQueue
    let readers: ReadPool
    package let path: String
    /// Whether writes currently succeed (set by the writer; `/readyz` reports it).
    package let health = StorageHealth()
    /// Stored customizations (all apps): counted once at start, then kept by the writes that change the
    /// count, applied only after their batch committed, so `/metrics` never scans the table.
    private let customizationTotal: Locked<Int>
    /// Kept history rows (all apps): counted once at start, then kept like `customizationTotal`.
    let historyTotal: Locked<Int>
    /// Stored customizations (and users without one) read recently, so a read answers without SQLite.
    package let records: RecordCache
    /// Checkpoints the WAL off the writer's thread.
    private let checkpointer: Checkpointer
    /// Where the bounded sweep of expired idempotent answers goes on from (SQLiteStore+History).
    let answerBookkeeping = AnswerBookkeeping()
    /// Told of writes that committed after their caller's bound passed (`SQLiteStore+Late`).
    let observers = ChangeObservers()

    /// Opens or creates the database, checks it, migrates it and starts the writer.
    /// - Throws: `StorageError` for a file that is not a database, a corrupt one, or one from a newer version.
    package init(configuration: Configuration) throws {
        var options = SQLiteConnection.Options()
        options.synchronousFull = configuration.synchronousFull
        let db = try SQLiteConnection(path: configuration.path, options: options)
        let check = try db.scalarText("PRAGMA quick_check")
        guard check == "ok" else {
            throw StorageError(
                extendedCode: SQLITE_CORRUPT,
                message: "\(configuration.path) failed PRAGMA quick_check (\(check)); refusing to start: restore a backup")
        }
        try Migrations.migrate(db, now: Timestamp.now())
        try Self.checkWritable(db)
        customizationTotal = Locked(try db.scalarInt("SELECT count(*) FROM customizations") ?? 0)
        historyTotal = Locked(try db.scalarInt("SELECT count(*) FROM customization_history") ?? 0)
        var readOnly = options
        readOnly.readOnly = true
        let count = max(1, configuration.readers)
        var connections: [SQLiteConnection] = []
        for _ in 0..<count {
            let reader = try SQLiteConnection(path: configuration.path, options: readOnly)
            try reader.execute("PRAGMA query_only=ON")
            try reader.setPageCache(bytes: configuration.readerPageCacheBytes)
            connections.append(reader)
        }
        self.path = configuration.path
        self.readers = ReadPool(connections: connections)
        self.records = RecordCache(budget: configuration.recordCacheBytes)
        // The writer no longer checkpoints inside its commits; the checkpointer does, on its own connection.
        try db.execute("PRAGMA wal_autocheckpoint=0")
        try db.setPageCache(bytes: configuration.writerPageCacheBytes)
        let checkpointer = Checkpointer(connection: try SQLiteConnection(path: configuration.path, options: options))
        self.checkpointer = checkpointer
        // The one batch observer (metrics, benchmarks, tests), fixed before the writer starts.
        let onBatch = configuration.onBatch
        self.writer = WriteQueue(connection: db, maxBatch: configuration.groupCommit ? configuration.maxBatch : 1, health: health,
                                 onBatch: { size, seconds in
                                     checkpointer.committed()
                                     onBatch(size, seconds)
                                 },
                                 beforeCommit: { [answerBookkeeping] db in try answerBookkeeping.storeOrder(db) },
                                 afterCommit: { [answerBookkeeping] in answerBookkeeping.batchCommitted() },
                                 betweenBatches: { db in checkpointer.copyRestOnWriter(db) }, bound: configuration.writeTimeout)
    }

    /// A read-only file, folder or mount opens, and even "migrates" when nothing is left to migrate, so
    /// only a real write tells: rewriting the header's `user_version` with its own value dirties page 1,
    /// which COMMIT must write to the WAL (https://www.sqlite.org/pragma.html#pragma_user_version).
    /// - Throws: `StorageError` with a message that says what to check.
    private static func checkWritable(_ db: SQLiteConnection) throws {
        do {
            try db.transaction { try rewriteUserVersion(db) }  // rolls back itself when the write fails
        } catch let error as StorageError {
            throw StorageError(
                extendedCode: error.extendedCode,
                message:
                    "cannot write to the database \(db.path) (\(error.message)); refusing to start: check that the file and its folder are writable (SQLite creates -wal and -shm files beside it) and the file system is not read-only or full"
            )
        }
    }

    /// The smallest real write: `user_version` set to its own value (inside the caller's transaction).
    private static func rewriteUserVersion(_ db: SQLiteConnection) throws(StorageError) {
        let version = try db.scalarInt("PRAGMA user_version") ?? 0
        try db.execute("PRAGMA user_version = \(version)")
    }

    /// A cheap real write on the writer (see `checkWritable`); clears `health` when it commits.
    package func probeWrite() async -> Bool {
        do {
            try await writer.write { db in try Self.rewriteUserVersion(db) }
            return true
        } catch {
            return false
        }
    }

    /// Runs `sql` on the writer connection inside a batch (tests: `PRAGMA max_page_count` fills the database).
    func executeOnWriter(_ sql: String) async throws {
        try await writer.write { db in try db.execute(sql) }
    }

    /// Finishes queued writes, waits for reads in progress, and closes every connection.
    package func close() async {
        writer.close()
        checkpointer.close()
        await readers.close()
    }

    /// Finishes queued writes and closes without waiting for readers (start-up failures: none has served).
    package func closeNow() {
        writer.close()
        checkpointer.close()
        readers.closeNow()
    }

    // MARK: - Apps

    private static let appColumns =
        "id, name, signing_secret, created_at, schema_version, schema_version_floor, minimum_schema_version, minimum_applied"

    private static func appRow(_ statement: SQLiteStatement) -> AppRecord {
        AppRecord(id: statement.text(0), name: statement.text(1), signingSecret: statement.text(2),
                  createdAt: statement.text(3), schemaVersion: statement.int(4), schemaVersionFloor: statement.int(5),
                  minimumSchemaVersion: statement.int(6), minimumApplied: statement.int(7))
    }

    package func createApp(id: String, name: String, signingSecret: String, createdAt: String) async throws -> AppRecord {
        try await writer.write { db in
            if try db.scalarInt("SELECT 1 FROM apps WHERE id = ?", [.text(id)]) != nil { throw StoreConflict.alreadyExists }
            // An earlier app with this id used versions up to `floor`: this one never reuses them.
            let floor = try db.scalarInt("SELECT last_schema_version FROM retired_apps WHERE id = ?", [.text(id)]) ?? 0
            try db.run("INSERT INTO apps (id, name, signing_secret, created_at, schema_version_floor) VALUES (?, ?, ?, ?, ?)",
                       [.text(id), .text(name), .text(signingSecret), .text(createdAt), .integer(floor)])
            return AppRecord(id: id, name: name, signingSecret: signingSecret, createdAt: createdAt, schemaVersion: 0, schemaVersionFloor: floor)
        }
    }

    package func app(_ id: String) async throws -> AppRecord? {
        try await readers.read { db in try Self.appRow(db, id) }
    }

    package func appNow(_ id: String) throws -> AppRecord? {
        guard let found = try readers.readNow({ db in try Self.appRow(db, id) }) else { throw ReadersBusy() }
        return found
    }

    private static func appRow(_ db: SQLiteConnection, _ id: String) throws -> AppRecord? {
        let statement = try db.statement("SELECT \(Self.appColumns) FROM apps WHERE id = ?").bind([.text(id)])
        defer { statement.reset() }
        return try statement.step() ? Self.appRow(statement) : nil
    }

    package func listApps(after cursor: String?, limit: Int) async throws -> [AppRecord] {
        try await readers.read { db in
            let statement = try db.statement("SELECT \(Self.appColumns) FROM apps WHERE id > ? ORDER BY id LIMIT ?")
                .bind([.text(cursor ?? ""), .integer(limit)])
            defer { statement.reset() }
            var apps: [AppRecord] = []
            while try statement.step() { apps.append(Self.appRow(statement)) }
            return apps
        }
    }

    package func deleteApp(_ id: String) async throws -> Bool {
        let (deleted, customizations, historyRows) = try await writer.write { db in
            // The cascade deletes these; counted first by the primary key's app_id prefix.
            let customizations = try db.scalarInt("SELECT count(*) FROM customizations WHERE app_id = ?", [.text(id)]) ?? 0
            // Each user's history hangs from their customization row: removed chain by chain (no cascade).
            var historyRows = 0
            do {
                let heads = try db.statement("SELECT user_id, history_head FROM customizations WHERE app_id = ? AND history_head IS NOT NULL")
                    .bind([.text(id)])
                defer { heads.reset() }
                while try heads.step() {
                    historyRows += try Self.removeHistory(head: heads.int(1), user: [.text(id), .text(heads.text(0))], db: db)
                }
            }
            // The id keeps its last schema version (see migration 2), in the same transaction as the delete.
            try db.run("""
                INSERT INTO retired_apps (id, last_schema_version)
                SELECT id, max(schema_version, schema_version_floor) FROM apps WHERE id = ?
                ON CONFLICT (id) DO UPDATE SET last_schema_version = max(last_schema_version, excluded.last_schema_version)
                """, [.text(id)])
            try db.run("DELETE FROM apps WHERE id = ?", [.text(id)])
            return db.changes > 0 ? (true, customizations, historyRows) : (false, 0, 0)
        } afterCommit: { [records] deleted, _, _ in
            if deleted { records.removeApp(id) }
        }
        adjustCustomizationTotal(-customizations)
        adjustHistoryTotal(-historyRows)
        return deleted
    }

    package func rotateSecret(appId: String, signingSecret: String) async throws {
        try await writer.write { db in
            try db.run("UPDATE apps SET signing_secret = ? WHERE id = ?", [.text(signingSecret), .text(appId)])
            if db.changes == 0 { throw StoreConflict.notFound }
        }
    }

    package func setMinimumSchemaVersion(appId: String, minimum: Int) async throws -> AppRecord {
        try await writer.write { db in
            guard let app = try Self.appRow(db, appId) else { throw StoreConflict.notFound }
            guard minimum >= app.minimumApplied else { throw StoreConflict.minimumApplied(current: app.minimumApplied) }
            guard minimum <= app.schemaVersion else { throw StoreConflict.revisionMismatch(current: app.schemaVersion) }
            try db.run("UPDATE apps SET minimum_schema_version = ? WHERE id = ?", [.integer(minimum), .text(appId)])
            return AppRecord(id: app.id, name: app.name, signingSecret: app.signingSecret, createdAt: app.createdAt, schemaVersion: app.schemaVersion,
                             schemaVersionFloor: app.schemaVersionFloor, minimumSchemaVersion: minimum, minimumApplied: app.minimumApplied)
        }
    }

    package func noteMinimumApplied(appId: String, minimum: Int) async throws -> Bool {
        try await writer.write { db in
            try db.run("UPDATE apps SET minimum_applied = max(minimum_applied, ?) WHERE id = ? AND minimum_schema_version >= ?",
                       [.integer(minimum), .text(appId), .integer(minimum)])
            return db.changes > 0
        }
    }

    // MARK: - Customizations

    private static func customizationRow(_ statement: SQLiteStatement, appId: String, userId: String) -> CustomizationRecord {
        CustomizationRecord(appId: appId, userId: userId, revision: statement.int(0), schemaVersion: statement.int(1),
                            document: statement.bytes(2), updatedAt: statement.text(3))
    }

    private static let selectCustomization =
        "SELECT revision, schema_version, document, updated_at FROM customizations WHERE app_id = ? AND user_id = ?"

    package func customization(appId: String, userId: String) async throws -> CustomizationRecord? {
        let key = RecordCache.key(appId: appId, userId: userId)
        if let cached = records.value(key) { return cached }
        let ticket = records.ticket(for: key)
        let record = try await readers.read { db in try Self.customizationRow(db, appId: appId, userId: userId) }
        records.fill(key, record, ticket: ticket)
        return record
    }

    package func customizationNow(appId: String, userId: String) throws -> CustomizationRecord? {
        let key = RecordCache.key(appId: appId, userId: userId)
        if let cached = records.value(key) { return cached }
        let ticket = records.ticket(for: key)
        guard let found = try readers.readNow({ db in try Self.customizationRow(db, appId: appId, userId: userId) }) else { throw ReadersBusy() }
        records.fill(key, found, ticket: ticket)
        return found
    }

    static func customizationRow(_ db: SQLiteConnection, appId: String, userId: String) throws -> CustomizationRecord? {
        let statement = try db.statement(Self.selectCustomization).bind([.text(appId), .text(userId)])
        defer { statement.reset() }
        return try statement.step() ? Self.customizationRow(statement, appId: appId, userId: userId) : nil
    }

    package func updateCustomization(
        appId: String, userId: String, expectedRevision: Int?,
        change: @escaping @Sendable (CustomizationRecord?) throws -> CustomizationRecord?
    ) async throws -> CustomizationRecord? {
        let (stored, added) = try await writer.write { db -> (CustomizationRecord?, Int) in
            let statement = try db.statement(Self.selectCustomization).bind([.text(appId), .text(userId)])
            let current = try statement.step() ? Self.customizationRow(statement, appId: appId, userId: userId) : nil
            statement.reset()
            if let expectedRevision, expectedRevision != (current?.revision ?? 0) {
                throw StoreConflict.revisionMismatch(current: current?.revision ?? 0)
            }
            guard let next = try change(current) else { return (current, 0) }
            do {
                let history = try Self.historyHeadAndFloor([.text(appId), .text(userId)], db: db)
                try Self.storeRevision(next, appId: appId, userId: userId, history: history, db: db)
            } catch let error as StorageError where error.isConstraintViolation {
                throw StoreConflict.notFound  // the app was deleted meanwhile (foreign key)
            }
            return (next, current == nil ? 1 : 0)
        } afterCommit: { [records] stored, _ in
            records.set(appId: appId, userId: userId, stored)
        }
        adjustCustomizationTotal(added)
        return stored
    }

    package func deleteCustomization(appId: String, userId: String, expectedRevision: Int?) async throws -> Bool {
        let (deleted, historyRows) = try await writer.write { db -> (Bool, Int) in
            if let expectedRevision {
                let current =
                    try db.scalarInt("SELECT revision FROM customizations WHERE app_id = ? AND user_id = ?", [.text(appId), .text(userId)]) ?? 0
                if current != expectedRevision { throw StoreConflict.revisionMismatch(current: current) }
            }
            // The history hangs from the row: it goes with it (the API's DELETE stores the empty customization instead).
            let user: [SQLiteValue] = [.text(appId), .text(userId)]
            let historyRows = try Self.removeHistory(head: Self.historyHead(user, db: db), user: user, keepingAnswersFrom: 0, db: db)
            try db.run("DELETE FROM customizations WHERE app_id = ? AND user_id = ?", user)
            return (db.changes > 0, historyRows)
        } afterCommit: { [records] _ in
            records.set(appId: appId, userId: userId, nil)
        }
        if deleted { adjustCustomizationTotal(-1) }
        adjustHistoryTotal(-historyRows)
        return deleted
    }

    package func forEachCustomization(appId: String, _ body: (CustomizationRecord) throws -> Void) async throws {
        try await readers.read { db in
            let statement = try db.statement("SELECT revision, schema_version, document, updated_at, user_id FROM customizations WHERE app_id = ?")
                .bind([.text(appId)])
            defer { statement.reset() }
            while try statement.step() {
                try body(Self.customizationRow(statement, appId: appId, userId: statement.text(4)))
            }
        }
    }

    /// From memory, never the table (a `count(*)` over 400,000 rows per scrape blocked a pool thread).
    package func customizationCount() async throws -> Int {
        customizationTotal.withLock { $0 }
    }

    /// Called only after the write that changed the count returned, i.e. after its batch committed.
    func adjustCustomizationTotal(_ delta: Int) {
        if delta != 0 { customizationTotal.withLock { $0 += delta } }
    }

    package func ping() async -> Bool {
        (try? await readers.read { db in try db.scalarInt("SELECT 1") }) == 1
    }

    /// The writer's last failure that made the database unwritable, nil once a commit succeeded. While it
    /// lasts, at most every `StorePolicy.retryAfterSeconds` this runs a probe write, so a server that a load balancer
    /// took out of rotation (no client writes reach it) still notices the disk has room again.
    package func writeFailure() async -> StorageError? {
        guard let failure = health.current else { return nil }
        if DispatchTime.now().uptimeNanoseconds &- failure.at >= UInt64(StorePolicy.retryAfterSeconds) * 1_000_000_000 {
            _ = await probeWrite()
        }
        return health.current?.error
    }

    package var recordCacheStatistics: CacheStatistics? { records.statistics }

    package func backup(to path: String) async throws {
        try await readers.read { db in try db.backup(to: path) }
    }
}
