import TabStoreStore
import TabStoreSupport

/// Named operator tokens (migration 5): digests only. Every check reads the table, so a revocation holds on
/// every replica at once.
extension PostgresStore {
    package func createOperatorToken(_ token: OperatorTokenRecord) async throws -> OperatorTokenCreation {
        try await transaction { db in
            // Creations take turns (the lock conflicts with itself, not with reads), so the count holds until commit.
            try db.query("LOCK TABLE operator_tokens IN SHARE ROW EXCLUSIVE MODE")
            let count = try db.query("SELECT count(*) FROM operator_tokens")
            if count.int(0, 0) >= OperatorTokenRecord.maxTokens { return .full }
            let inserted = try db.query("""
                INSERT INTO operator_tokens (name, digest, scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT DO NOTHING
                """, [.text(token.name), .bytes(token.digest), .text(token.scope), .text(token.createdAt),
                      token.expiresAt.map { .integer($0) } ?? .null]).affected > 0
            return inserted ? .created : .nameTaken
        }
    }

    package func operatorTokens() async throws -> [OperatorTokenRecord] {
        let rows = try await pool.run { db in
            try db.query("SELECT name, digest, scope, created_at, expires_at FROM operator_tokens ORDER BY name")
        }
        return (0..<rows.count).map { Self.operatorTokenRow(rows, $0) }
    }

    package func operatorToken(digest: [UInt8]) async throws -> OperatorTokenRecord? {
        let rows = try await pool.run { db in
            try db.query("SELECT name, digest, scope, created_at, expires_at FROM operator_tokens WHERE digest = $1", [.bytes(digest)])
        }
        return rows.count > 0 ? Self.operatorTokenRow(rows, 0) : nil
    }

    package func revokeOperatorToken(name: String) async throws -> Bool {
        // The other replicas end the streams and long polls the token opened once this commits.
        try await transaction { db in
            let revoked = try db.query("DELETE FROM operator_tokens WHERE name = $1", [.text(name)]).affected > 0
            if revoked { try self.notify(db, .operatorTokenRevoked(name: name)) }
            return revoked
        }
    }

    private static func operatorTokenRow(_ rows: PostgresRows, _ row: Int) -> OperatorTokenRecord {
        OperatorTokenRecord(name: rows.text(row, 0), digest: rows.bytes(row, 1), scope: rows.text(row, 2), createdAt: rows.text(row, 3),
                            expiresAt: rows.isNull(row, 4) ? nil : rows.int(row, 4))
    }
}
