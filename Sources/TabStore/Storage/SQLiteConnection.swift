import CSQLite
import Glibc
import TabStoreStore
import TabStoreSupport

/// One SQLite connection. Owned by one thread at a time (the writer, or a reader checked out of the pool);
/// that is why it is `@unchecked Sendable`: it moves between threads but is never used by two at once.
package final class SQLiteConnection: @unchecked Sendable {
    let handle: OpaquePointer
    package let path: String
    private var statements: [String: SQLiteStatement] = [:]

    package struct Options: Sendable {
        package var readOnly = false
        package var busyTimeoutMilliseconds: Int32 = 5_000
        /// `FULL` makes every commit durable across power loss; `NORMAL` in WAL mode may lose the last
        /// commits on power loss but never corrupts (https://www.sqlite.org/pragma.html#pragma_synchronous).
        package var synchronousFull = true

        package init() {}
    }

    /// Opens (creating when writable) a database file in WAL mode with foreign keys on.
    /// - Throws: `StorageError` when the file cannot be opened or is not a database.
    package init(path: String, options: Options = Options()) throws(StorageError) {
        _ = PageCache.installed  // before SQLite initializes, at the first connection
        var db: OpaquePointer?
        let flags = (options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard let db else { throw StorageError(extendedCode: rc, message: "out of memory opening \(path)") }
        guard rc == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            sqlite3_close_v2(db)
            throw StorageError(extendedCode: rc, message: "cannot open \(path): \(message)")
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, options.busyTimeoutMilliseconds)
        do {
            // Probe: a file that is not a database fails here, with a message that says so.
            try execute("SELECT count(*) FROM sqlite_schema")
        } catch where error.code == SQLITE_CANTOPEN || error.code == SQLITE_READONLY || error.code == SQLITE_IOERR {
            // Not the file's content: e.g. the folder does not let SQLite create the -wal/-shm files.
            throw StorageError(
                extendedCode: error.extendedCode,
                message: "cannot use \(path): \(error.message); check that the file and its folder are readable and writable")
        } catch {
            throw StorageError(extendedCode: error.extendedCode, message: "\(path) is not a usable SQLite database: \(error.message)")
        }
        if !options.readOnly {
            let mode = try scalarText("PRAGMA journal_mode=WAL")
            guard mode.lowercased() == "wal" else {
                throw StorageError(extendedCode: SQLITE_ERROR, message: "could not enable WAL journal mode on \(path) (got \(mode))")
            }
        }
        try execute("PRAGMA foreign_keys=ON")
        try execute(options.synchronousFull ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(_ rc: Int32, sql: String?) -> StorageError {
        StorageError(extendedCode: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Bounds this connection's page cache to `bytes` (SQLite's `cache_size` in KiB, at least one page's worth).
    package func setPageCache(bytes: Int) throws(StorageError) {
        try execute("PRAGMA cache_size = -\(max(4, bytes / 1024))")
    }

    /// Runs one or more statements without parameters.
    package func execute(_ sql: String) throws(StorageError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A prepared statement, cached per connection by its SQL text.
    package func statement(_ sql: String) throws(StorageError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs a statement with bound values, ignoring any rows.
    package func run(_ sql: String, _ values: [SQLiteValue] = []) throws(StorageError) {
        try statement(sql).bind(values).run()
    }

    /// The first column of the first row as text.
    package func scalarText(_ sql: String, _ values: [SQLiteValue] = []) throws(StorageError) -> String {
        let statement = try statement(sql).bind(values)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : ""
    }

    /// The first column of the first row as an integer, nil when there is no row.
    package func scalarInt(_ sql: String, _ values: [SQLiteValue] = []) throws(StorageError) -> Int? {
        let statement = try statement(sql).bind(values)
        defer { statement.reset() }
        return try statement.step() ? statement.int(0) : nil
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in a transaction that commits when it returns and rolls back when it throws.
    /// Runs `body` inside a savepoint of the open transaction (https://www.sqlite.org/lang_savepoint.html):
    /// what it did is kept when it returns nil, and rolled back when it returns an error, which is returned.
    /// Prepared statements (cached per connection) because the writer runs this for every write.
    /// - Throws: `StorageError` when the savepoint statements themselves fail (the transaction is then unusable).
    ///   After SQLITE_FULL, IOERR or BUSY, SQLite may have rolled back the whole transaction, so the savepoint
    ///   is gone: then the body's own error is thrown, since it names the cause (a full disk, not "no such
    ///   savepoint").
    package func inSavepoint(_ body: () -> (any Error)?) throws(StorageError) -> (any Error)? {
        try run("SAVEPOINT job")
        let failure = body()
        do {
            if failure != nil { try run("ROLLBACK TO job") }
            try run("RELEASE job")
        } catch {
            throw (failure as? StorageError) ?? error
        }
        return failure
    }

    package func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")  // the original error is what the caller needs; a failed rollback leaves autocommit anyway
            throw error
        }
    }

    /// Copies the whole database to `path` with SQLite's online backup API
    /// (https://www.sqlite.org/backup.html): consistent even while writers continue.
    ///
    /// The copy holds the apps' signing secrets, so it never exists with a wider mode than 0600: `path` is
    /// first claimed exclusively (mode 0600, refusing an existing file or a symlink), the copy is written
    /// into a second owner-only file beside it and renamed over the claim only once complete, so `path`
    /// never holds half a backup. SQLite gives the copy's rollback journal the mode of the file it journals
    /// (https://www.sqlite.org/tempfiles.html, "Rollback Journals").
    /// - Throws: `BackupRefused` when `path` exists or cannot be created; `StorageError` from SQLite.
    package func backup(to path: String) throws {
        do throws(SystemError) {
            Syscall.close(try OwnerOnlyFile.create(path))
        } catch {
            let reason = error.errno == EEXIST ? "it already exists; refusing to overwrite it (remove it or choose another path)" : "\(error)"
            throw BackupRefused(description: "cannot write the backup to \(path): \(reason)")
        }
        let partial = path + ".partial-\(getpid())"
        do throws(StorageError) {
            do throws(SystemError) {
                Syscall.close(try OwnerOnlyFile.create(partial))
            } catch {
                throw StorageError(extendedCode: SQLITE_CANTOPEN, message: "cannot create \(partial): \(error)")
            }
            try copy(into: partial)
            guard rename(partial, path) == 0 else {
                throw StorageError(extendedCode: SQLITE_IOERR, message: "cannot rename \(partial) to \(path): \(String(cString: strerror(errno)))")
            }
        } catch {
            unlink(partial)
            unlink(path)  // the empty claim created above: ours, since O_EXCL succeeded
            throw error
        }
    }

    /// The backup API steps into an existing, empty, owner-only file.
    private func copy(into path: String) throws(StorageError) {
        var destination: OpaquePointer?
        let rc = sqlite3_open_v2(path, &destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE, nil)
        guard rc == SQLITE_OK, let destination else {
            let message = destination.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(destination)
            throw StorageError(extendedCode: rc, message: "cannot open backup file \(path): \(message)")
        }
        defer { sqlite3_close_v2(destination) }
        guard let backup = sqlite3_backup_init(destination, "main", handle, "main") else {
            throw StorageError(extendedCode: sqlite3_extended_errcode(destination), message: String(cString: sqlite3_errmsg(destination)))
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finish == SQLITE_OK else {
            throw StorageError(
                extendedCode: step == SQLITE_DONE ? finish : step,
                message: "backup to \(path) failed: \(String(cString: sqlite3_errmsg(destination)))")
        }
    }
}
