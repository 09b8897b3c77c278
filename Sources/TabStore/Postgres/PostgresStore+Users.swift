import TabStoreStore
import TabStoreSupport

/// The operator's list of an app's users.
extension PostgresStore {
    /// A range scan of the primary key `(app_id, user_id)`: `user_id` is `COLLATE "C"`, so ids compare as bytes
    /// (https://www.postgresql.org/docs/15/collation.html) and the prefix is a byte range, never a `LIKE` pattern.
    package func users(appId: String, prefix: String, after: String?, limit: Int) async throws -> [StoredUser] {
        let (start, inclusive) = StoredUser.scanStart(prefix: prefix, after: after)
        let rows = try await pool.run { db in
            try db.query("""
                SELECT user_id, revision, schema_version, updated_at FROM customizations
                WHERE app_id = $1 AND user_id \(inclusive ? ">=" : ">") $2 ORDER BY user_id LIMIT $3
                """, [.text(appId), .text(start), .integer(max(0, limit))])
        }
        let users = (0..<rows.count).map { row in
            let version = rows.int(row, 2)
            return StoredUser(userId: rows.text(row, 0), revision: rows.int(row, 1),
                              schemaVersion: version.magnitude > Int.max ? 0 : abs(version), updatedAt: rows.text(row, 3))
        }
        return StoredUser.prefixed(users, prefix: prefix)
    }
}
