/// A storage failure, the same for every backend: what kind it is (which decides the client's answer), the
/// engine's own code and message for the log, and the SQL (never bound values).
package struct StorageError: Error, Sendable, CustomStringConvertible {
    /// What the API makes of a failure.
    package enum Kind: Sendable, Equatable {
        /// A database server does not answer within its bound (unreachable, frozen, restarting, every connection
        /// busy): 503 `database-unavailable` with `Retry-After`. `condition` is the short name clients and
        /// operators see (no host names, no SQL).
        case unavailable(condition: String)
        /// The database cannot take writes now, for reasons outside the request (a full disk, a read-only file,
        /// an I/O error, corruption): 503 `storage-unavailable` with `Retry-After`, and `/readyz` reports it.
        case unwritable(condition: String)
        /// A uniqueness or foreign-key constraint refused the statement.
        case constraintViolation
        /// Anything else (a bug, a damaged row): logged, 500.
        case failure
    }

    package let kind: Kind
    /// The engine's code for the log: SQLite's extended result code (`TabStoreStorage`), 0 from PostgreSQL.
    package let engineCode: Int32
    package let message: String
    package let sql: String?

    package init(kind: Kind, engineCode: Int32 = 0, message: String, sql: String? = nil) {
        self.kind = kind
        self.engineCode = engineCode
        self.message = message
        self.sql = sql
    }

    /// A database server's failure to serve now: `condition` names it for clients, `message` is for the log.
    package init(unavailable condition: String, message: String, sql: String? = nil) {
        self.init(kind: .unavailable(condition: condition), message: message, sql: sql)
    }

    /// A failure that says nothing about availability (a bug, a constraint a server reports as text): 500.
    package init(failure message: String, sql: String? = nil) {
        self.init(kind: .failure, message: message, sql: sql)
    }

    /// Whether the database cannot serve now (either kind): the client may retry later.
    package var isUnavailable: Bool { conditionName != nil }

    package var isConstraintViolation: Bool { kind == .constraintViolation }

    /// The condition's short name when a database server is unavailable, nil otherwise.
    package var unavailableCondition: String? {
        if case .unavailable(let condition) = kind { return condition }
        return nil
    }

    /// The condition's short name when the database cannot serve (either kind), nil otherwise.
    package var conditionName: String? {
        switch kind {
        case .unavailable(let condition), .unwritable(let condition): condition
        case .constraintViolation, .failure: nil
        }
    }

    package var description: String {
        var text = switch kind {
        case .unavailable(let condition): "database unavailable (\(condition)): \(message)"
        case .unwritable, .constraintViolation, .failure: "storage error \(engineCode): \(message)"
        }
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
/// operator's mistake, said in plain words rather than as a database error.
package struct BackupRefused: Error, Sendable, CustomStringConvertible {
    package let description: String

    package init(description: String) { self.description = description }
}
