import TabStoreStore
import TabStoreSupport

/// The audit log (migration 6), the oldest past the retention removed with each append.
extension PostgresStore {
    package func appendAudit(_ entry: AuditEntry, keep: Int) async throws {
        try await pool.run { db in
            let rows = try db.query("""
                INSERT INTO audit_log (at, actor, action, app_id, user_id, target, request_id, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                RETURNING seq
                """, [.text(entry.at), .text(entry.actor), .text(entry.action), entry.appId.map { .text($0) } ?? .null,
                      entry.userId.map { .text($0) } ?? .null, entry.target.map { .text($0) } ?? .null, .text(entry.requestId),
                      .integer(entry.status)])
            if rows.count > 0 {
                try db.query("DELETE FROM audit_log WHERE seq <= $1", [.integer(rows.int(0, 0) - max(1, keep))])
            }
        }
    }

    package func audit(app: String?, actor: String?, before: Int?, limit: Int) async throws -> [AuditEntry] {
        let rows = try await pool.run { db in
            try db.query("""
                SELECT seq, at, actor, action, app_id, user_id, target, request_id, status FROM audit_log
                WHERE seq < $1 AND ($2::text IS NULL OR app_id = $2) AND ($3::text IS NULL OR actor = $3) ORDER BY seq DESC LIMIT $4
                """, [.integer(before ?? Int.max), app.map { .text($0) } ?? .null, actor.map { .text($0) } ?? .null, .integer(max(0, limit))])
        }
        return (0..<rows.count).map { row in
            AuditEntry(seq: rows.int(row, 0), at: rows.text(row, 1), actor: rows.text(row, 2), action: rows.text(row, 3),
                       appId: rows.isNull(row, 4) ? nil : rows.text(row, 4), userId: rows.isNull(row, 5) ? nil : rows.text(row, 5),
                       target: rows.isNull(row, 6) ? nil : rows.text(row, 6), requestId: rows.text(row, 7), status: rows.int(row, 8))
        }
    }
}
