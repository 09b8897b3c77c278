import TabStoreStore
import TabStoreSupport

/// The operator's list of an app's users.
extension SQLiteStore {
    /// A range scan of the primary key `(app_id, user_id)`: the BINARY collation compares ids as bytes
    /// (https://sqlite.org/datatype3.html#collation), so the prefix is a byte range and never a `LIKE` pattern.
    package func users(appId: String, prefix: String, after: String?, limit: Int) async throws -> [StoredUser] {
        let (start, inclusive) = StoredUser.scanStart(prefix: prefix, after: after)
        let rows = try await readers.read { db in
            let statement = try db.statement("""
                SELECT user_id, revision, schema_version, updated_at FROM customizations
                WHERE app_id = ? AND user_id \(inclusive ? ">=" : ">") ? ORDER BY user_id LIMIT ?
                """).bind([.text(appId), .text(start), .integer(max(0, limit))])
            defer { statement.reset() }
            var users: [StoredUser] = []
            while try statement.step() {
                let version = statement.int(2)
                users.append(StoredUser(userId: statement.text(0), revision: statement.int(1),
                                        schemaVersion: version.magnitude > Int.max ? 0 : abs(version), updatedAt: statement.text(3)))
            }
            return users
        }
        return StoredUser.prefixed(rows, prefix: prefix)
    }
}
