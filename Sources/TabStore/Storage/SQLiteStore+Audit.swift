import TabStoreStore
import TabStoreSupport

/// The audit log (migration 12): appended by the writer, the oldest past the retention removed with each append.
extension SQLiteStore {
    package func appendAudit(_ entry: AuditEntry, keep: Int) async throws {
        try await writer.write { db in
            try db.run("""
                INSERT INTO audit_log (at, actor, action, app_id, user_id, target, request_id, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(entry.at), .text(entry.actor), .text(entry.action), entry.appId.map { .text($0) } ?? .null,
                      entry.userId.map { .text($0) } ?? .null, entry.target.map { .text($0) } ?? .null, .text(entry.requestId),
                      .integer(entry.status)])
            // Bounded growth: everything at or below the newest seq minus `keep` goes (a range of the primary key).
            try db.run("DELETE FROM audit_log WHERE seq <= (SELECT max(seq) FROM audit_log) - ?", [.integer(max(1, keep))])
        }
    }

    package func audit(app: String?, actor: String?, before: Int?, limit: Int) async throws -> [AuditEntry] {
        try await readers.read { db in
            let statement = try db.statement("""
                SELECT seq, at, actor, action, app_id, user_id, target, request_id, status FROM audit_log
                WHERE seq < ? AND (? IS NULL OR app_id = ?) AND (? IS NULL OR actor = ?) ORDER BY seq DESC LIMIT ?
                """).bind([.integer(before ?? Int.max), app.map { .text($0) } ?? .null, app.map { .text($0) } ?? .null,
                           actor.map { .text($0) } ?? .null, actor.map { .text($0) } ?? .null, .integer(max(0, limit))])
            defer { statement.reset() }
            var entries: [AuditEntry] = []
            while try statement.step() {
                entries.append(AuditEntry(seq: statement.int(0), at: statement.text(1), actor: statement.text(2), action: statement.text(3),
                                          appId: statement.isNull(4) ? nil : statement.text(4), userId: statement.isNull(5) ? nil : statement.text(5),
                        target: statement.isNull(6) ? nil : statement.text(6), requestId: statement.text(7), status: statement.int(8)))
            }
            return entries
        }
    }
}
