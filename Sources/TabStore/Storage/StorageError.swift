import CSQLite

/// A storage failure: SQLite's extended result code, its message and the SQL (never bound values).
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public let extendedCode: Int32
    public let message: String
    public let sql: String?

    public init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    public var code: Int32 { extendedCode & 0xFF }

    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += " (in \(sql))" }
        return text
    }
}

/// What the store refuses for reasons a client caused (mapped to HTTP statuses by the API layer).
public enum StoreConflict: Error, Sendable, Equatable {
    /// The row already exists (409).
    case alreadyExists
    /// The row does not exist (404).
    case notFound
    /// Compare-and-set failed: the stored revision is `current` (412).
    case revisionMismatch(current: Int)
}
