import CSQLite

/// A storage failure: SQLite's extended result code, its message and the SQL (never bound values).
package struct StorageError: Error, Sendable, CustomStringConvertible {
    package let extendedCode: Int32
    package let message: String
    package let sql: String?
    /// Set by a backend other than SQLite (PostgreSQL) when the database cannot serve now (unreachable,
    /// restarting, every connection busy): the short condition name, and the error is `isUnavailable`.
    package let unavailableCondition: String?

    package init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.unavailableCondition = nil
    }

    /// A failure of a database server rather than the file: `condition` names it for clients (no host names,
    /// no SQL), `message` is for the log. `SQLITE_IOERR` keeps `code` meaningful to code that reads it.
    package init(unavailable condition: String, message: String, sql: String? = nil) {
        self.extendedCode = SQLITE_IOERR
        self.message = message
        self.sql = sql
        self.unavailableCondition = condition
    }

    /// A database server's error that says nothing about availability (a bug, a constraint): logged, 500.
    package init(serverMessage: String, sql: String? = nil) {
        self.extendedCode = SQLITE_ERROR
        self.message = serverMessage
        self.sql = sql
        self.unavailableCondition = nil
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    package var code: Int32 { extendedCode & 0xFF }

    package var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }

    /// The database cannot take writes now, for reasons outside the request: a full disk or
    /// `max_page_count` (SQLITE_FULL), a read-only file, folder or mount (SQLITE_READONLY and its extended
    /// codes), an I/O error (SQLITE_IOERR_*), a file that cannot be opened (SQLITE_CANTOPEN, e.g. the -wal or
    /// -shm file) or corruption (SQLITE_CORRUPT). See https://www.sqlite.org/rescode.html.
    /// The API answers these with 503 and `Retry-After`; `/readyz` reports them.
    package var isUnavailable: Bool {
        if unavailableCondition != nil { return true }
        return switch code {
        case SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_CORRUPT: true
        default: false
        }
    }

    /// A short name of the condition for operators and clients (no paths, no SQL).
    package var conditionName: String {
        if let unavailableCondition { return unavailableCondition }
        return switch code {
        case SQLITE_FULL: "database or disk is full"
        case SQLITE_READONLY: "database is read-only"
        case SQLITE_IOERR: "disk I/O error"
        case SQLITE_CANTOPEN: "cannot open a database file"
        case SQLITE_CORRUPT: "database is corrupt"
        default: "SQLite error \(code)"
        }
    }

    package var description: String {
        var text = unavailableCondition != nil ? "database unavailable: \(message)" : "SQLite error \(extendedCode): \(message)"
        if let sql { text += " (in \(sql))" }
        return text
    }
}

/// What the store refuses for reasons a client caused (mapped to HTTP statuses by the API layer).
package enum StoreConflict: Error, Sendable, Equatable {
    /// The row already exists (409).
    case alreadyExists
    /// The row does not exist (404).
    case notFound
    /// Compare-and-set failed: the stored revision is `current` (412).
    case revisionMismatch(current: Int)
    /// An idempotent answer is already stored under the key (another write took it meanwhile).
    case answerExists
    /// The minimum schema version cannot go below `current`: writes already dropped choices under it (409).
    case minimumApplied(current: Int)
}

/// `backup` will not write where it was asked (the path exists, is a symlink, or cannot be created): an
/// operator's mistake, said in plain words rather than as an SQLite error.
package struct BackupRefused: Error, Sendable, CustomStringConvertible {
    package let description: String
}
