import TabStoreStore
import TabStoreSupport

/// Named operator tokens (migration 11): digests only.
extension SQLiteStore {
    package func createOperatorToken(_ token: OperatorTokenRecord) async throws -> OperatorTokenCreation {
        // One writer: the count and the insert are one step no other write comes between.
        try await writer.write { db in
            if try db.scalarInt("SELECT count(*) FROM operator_tokens") ?? 0 >= OperatorTokenRecord.maxTokens { return .full }
            try db.run("""
                INSERT INTO operator_tokens (name, digest, scope, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """, [.text(token.name), .blob(token.digest), .text(token.scope), .text(token.createdAt),
                      token.expiresAt.map { .integer($0) } ?? .null])
            return db.changes > 0 ? .created : .nameTaken
        }
    }

    package func operatorTokens() async throws -> [OperatorTokenRecord] {
        try await readers.read { db in
            // Every one, so each can be seen and revoked (creation keeps them at most `maxTokens`).
            let statement = try db.statement("SELECT name, digest, scope, created_at, expires_at FROM operator_tokens ORDER BY name")
            defer { statement.reset() }
            var tokens: [OperatorTokenRecord] = []
            while try statement.step() { tokens.append(Self.operatorTokenRow(statement)) }
            return tokens
        }
    }

    package func operatorToken(digest: [UInt8]) async throws -> OperatorTokenRecord? {
        try await readers.read { db in
            let statement = try db.statement("SELECT name, digest, scope, created_at, expires_at FROM operator_tokens WHERE digest = ?")
                .bind([.blob(digest)])
            defer { statement.reset() }
            return try statement.step() ? Self.operatorTokenRow(statement) : nil
        }
    }

    package func revokeOperatorToken(name: String) async throws -> Bool {
        try await writer.write { db in
            try db.run("DELETE FROM operator_tokens WHERE name = ?", [.text(name)])
            return db.changes > 0
        }
    }

    private static func operatorTokenRow(_ statement: SQLiteStatement) -> OperatorTokenRecord {
        OperatorTokenRecord(name: statement.text(0), digest: statement.bytes(1), scope: statement.text(2), createdAt: statement.text(3),
                            expiresAt: statement.isNull(4) ? nil : statement.int(4))
    }
}
