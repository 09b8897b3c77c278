import TabStoreStore
import CSQLite

/// A prepared statement; finalized when released. Used by one thread at a time, with its connection.
package final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private unowned let connection: SQLiteConnection

    init(connection: SQLiteConnection, sql: String) throws(StorageError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw connection.error(rc, sql: sql) }
        self.handle = statement
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds values to `?` parameters in order (1-based in SQLite).
    @discardableResult
    package func bind(_ values: [SQLiteValue]) throws(StorageError) -> SQLiteStatement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let number): rc = sqlite3_bind_int64(handle, index, Int64(number))
            case .text(let text):
                // With its byte length: a C string would end at the first NUL ("com.myApp\0x" binding as "com.myApp").
                var copy = text
                rc = copy.withUTF8 { bytes in
                    guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
                    guard let base = bytes.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, tabstore_sqlite_transient()) }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text(handle, index, $0, Int32(bytes.count), tabstore_sqlite_transient())
                    }
                }
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), tabstore_sqlite_transient())
                }
            }
            guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
        }
        return self
    }

    /// Steps once: true when a row is available.
    package func step() throws(StorageError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw connection.error(rc, sql: sql)
        }
    }

    /// Runs to completion, ignoring rows.
    package func run() throws(StorageError) {
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Leaves the statement ready for reuse and releases its read snapshot.
    package func reset() { sqlite3_reset(handle) }

    package func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    package func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    package func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// A value bound to a statement parameter.
package enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int)
    case text(String)
    case blob([UInt8])
}
