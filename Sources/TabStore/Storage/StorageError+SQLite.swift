import CSQLite
import TabStoreStore

/// SQLite's result codes as the contract's kinds of failure (https://www.sqlite.org/rescode.html).
extension StorageError {
    /// A failure SQLite reported with `extendedCode`: a full disk or `max_page_count` (SQLITE_FULL), a read-only
    /// file, folder or mount (SQLITE_READONLY and its extended codes), an I/O error (SQLITE_IOERR_*), a file that
    /// cannot be opened (SQLITE_CANTOPEN, e.g. the -wal or -shm file) and corruption (SQLITE_CORRUPT) mean the
    /// database cannot take writes now; a constraint is a constraint; anything else is a failure.
    package init(extendedCode: Int32, message: String, sql: String? = nil) {
        let kind: Kind = switch extendedCode & 0xFF {
        case SQLITE_FULL: .unwritable(condition: "database or disk is full")
        case SQLITE_READONLY: .unwritable(condition: "database is read-only")
        case SQLITE_IOERR: .unwritable(condition: "disk I/O error")
        case SQLITE_CANTOPEN: .unwritable(condition: "cannot open a database file")
        case SQLITE_CORRUPT: .unwritable(condition: "database is corrupt")
        case SQLITE_CONSTRAINT: .constraintViolation
        default: .failure
        }
        self.init(kind: kind, engineCode: extendedCode, message: message, sql: sql)
    }

    /// SQLite's extended result code (0 when the failure did not come from SQLite).
    package var extendedCode: Int32 { engineCode }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    package var code: Int32 { engineCode & 0xFF }
}
