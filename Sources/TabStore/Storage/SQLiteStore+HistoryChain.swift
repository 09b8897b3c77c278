import CSQLite
import TabStoreStore
import TabStoreSupport

/// A user's history on the embedded store is a chain (migration 7): the customization row names the newest
/// history row (`history_head`) and each row the one before it (`previous`). A write appends a row to the
/// table's end and rewrites the customization row it rewrites anyway; no per-user index entry is written.
/// Everything that reads or removes a user's history walks the chain from its head.
extension SQLiteStore {
    /// Adds the revision's history row after `previous` (the user's newest row until now), holding `answer` (the
    /// write's idempotent answer, numbered `order` in the insertion order) when given: its body is the row's
    /// document or empty (`HistoryAnswers`).
    /// - Returns: the new row's rowid, the user's new history head.
    static func storeHistory(_ commit: CustomizationCommit, _ record: CustomizationRecord, previous: Int?,
                             answer: (answer: IdempotentAnswer, order: Int)? = nil, db: SQLiteConnection) throws -> Int {
        let answerValues: [SQLiteValue] = answer.map { held in
            [.text(held.answer.key), .blob(held.answer.requestDigest), .integer(held.answer.status),
             held.answer.etag.map { .text($0) } ?? .null, .integer(held.answer.body.isEmpty ? 0 : 1), .integer(held.answer.createdAt),
             .integer(held.order)]
        } ?? Array(repeating: .null, count: 7)
        try db.run("""
            INSERT INTO customization_history (app_id, user_id, revision, previous, schema_version, change_kind, operations, document, updated_at,
                answer_key, answer_digest, answer_status, answer_etag, answer_with_document, answer_created, answer_order, actor, target_revision)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(record.appId), .text(record.userId), .integer(record.revision), previous.map { .integer($0) } ?? .null,
                  .integer(record.schemaVersion), .text(commit.change.rawValue), commit.operations.map { .blob($0) } ?? .null,
                  .blob(record.document), .text(record.updatedAt)] + answerValues
                + [commit.actor.map { .text($0) } ?? .null, commit.targetRevision.map { .integer($0) } ?? .null])
        return Int(sqlite3_last_insert_rowid(db.handle))
    }

    /// One link of a user's history chain: the row's revision, the rowid of the row before it, and the key of the
    /// idempotent answer the row holds (nil: none) with when that answer was made.
    struct HistoryLink {
        let rowid: Int
        let revision: Int
        let previous: Int?
        var answerKey: [UInt8]? = nil
        var answerCreatedAt = 0
    }

    /// The row `rowid` of the chain of (`user`: app id, user id), or nil when there is none (the chain's end).
    /// A link that does not belong to the user, or does not go back in revisions, ends the chain too: a chain
    /// is only ever built by its own user's writes, newest first.
    static func link(_ rowid: Int?, after newer: HistoryLink?, user: [SQLiteValue], db: SQLiteConnection) throws -> HistoryLink? {
        guard let rowid else { return nil }
        let statement = try db.statement("""
            SELECT revision, previous, answer_key, answer_created FROM customization_history WHERE rowid = ? AND app_id = ? AND user_id = ?
            """).bind([.integer(rowid)] + user)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let found = HistoryLink(rowid: rowid, revision: statement.int(0), previous: statement.isNull(1) ? nil : statement.int(1),
                                answerKey: statement.isNull(2) ? nil : statement.bytes(2), answerCreatedAt: statement.int(3))
        if let newer, found.revision >= newer.revision { return nil }
        return found
    }

    /// Removes every row of the chain from `head` (before its customization row goes). With `keepingAnswersFrom`,
    /// the answers the rows hold made at or after it move to `idempotent_answers` first, and answers there that
    /// name a row get its bytes (they still replay); without, the caller erases the user's answers too.
    /// - Returns: how many rows were removed.
    static func removeHistory(head: Int?, user: [SQLiteValue], keepingAnswersFrom: Int? = nil, db: SQLiteConnection) throws -> Int {
        let rows = try walk(from: head, user: user, db: db) { _ in true }
        if let keepingAnswersFrom {
            try copyNamedDocuments(of: rows, upTo: Int.max, user: user, db: db)
            for row in rows where row.answerKey != nil && row.answerCreatedAt >= keepingAnswersFrom { try moveAnswer(of: row, db: db) }
        }
        for row in rows { try db.run("DELETE FROM customization_history WHERE rowid = ?", [.integer(row.rowid)]) }
        return rows.count
    }

    /// The user's history head: the rowid of the newest row, from the customization row (nil: no history).
    static func historyHead(_ user: [SQLiteValue], db: SQLiteConnection) throws -> Int? {
        try historyHeadAndFloor(user, db: db).head
    }

    /// The history head and the highest revision the retention cut (rows at or below it are not listed).
    static func historyHeadAndFloor(_ user: [SQLiteValue], db: SQLiteConnection) throws -> (head: Int?, floor: Int) {
        let statement = try db.statement("SELECT history_head, history_floor FROM customizations WHERE app_id = ? AND user_id = ?").bind(user)
        defer { statement.reset() }
        guard try statement.step() else { return (nil, 0) }
        return (statement.isNull(0) ? nil : statement.int(0), statement.int(1))
    }

    /// The rows of the chain from `head`, newest first, while `condition` holds for them.
    static func walk(from head: Int?, user: [SQLiteValue], db: SQLiteConnection,
                     while condition: (HistoryLink) throws -> Bool) throws -> [HistoryLink] {
        var links: [HistoryLink] = []
        var next = try link(head, after: nil, user: user, db: db)
        while let current = next, try condition(current) {
            links.append(current)
            next = try link(current.previous, after: current, user: user, db: db)
        }
        return links
    }

    /// Removes the rows of the chain from `head` at or below revision `keepAbove` (every `housekeepingEvery`
    /// revisions, so at most that many more are stored; never read: `history` and `historyRecord` list only the
    /// last N). An idempotent answer that names a removed row gets that row's bytes as its own copy first: a
    /// repeat within 24 hours replays them even after the retention passed the revision. The newest kept row
    /// ends the chain from then on; `head` becomes nil when no row is kept. An answer a removed row holds leaves
    /// `answers`; a live one (made at or after `answersFrom`) moves to `idempotent_answers` first.
    /// - Returns: how many rows were removed.
    static func trimHistory(head: inout Int?, keepAbove: Int, user: [SQLiteValue], answers: inout HistoryAnswers, answersFrom: Int,
                            db: SQLiteConnection) throws -> Int {
        let kept = try walk(from: head, user: user, db: db) { $0.revision > keepAbove }
        let firstRemoved = kept.isEmpty ? head : kept[kept.count - 1].previous
        let removed = try walk(from: firstRemoved, user: user, db: db) { _ in true }
        guard !removed.isEmpty else { return 0 }
        try copyNamedDocuments(of: removed, upTo: keepAbove, user: user, db: db)
        for row in removed {
            if row.answerKey != nil {
                answers.remove(rowid: row.rowid)
                if row.answerCreatedAt >= answersFrom { try moveAnswer(of: row, db: db) }
            }
            try db.run("DELETE FROM customization_history WHERE rowid = ?", [.integer(row.rowid)])
        }
        if let last = kept.last {
            try db.run("UPDATE customization_history SET previous = NULL WHERE rowid = ?", [.integer(last.rowid)])
        } else {
            head = nil
        }
        return removed.count
    }

    /// Copies the answer history row `row` holds to `idempotent_answers` (its body: the row's document, or empty),
    /// with its number in the insertion order, before the row goes. A row there under the same key made earlier
    /// (expired: two live answers never share a key) gives way.
    static func moveAnswer(of row: HistoryLink, db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO idempotent_answers (app_id, user_id, idempotency_key, request_digest, status, etag, body, body_revision, created_at,
                insert_order)
            SELECT app_id, user_id, answer_key, answer_digest, answer_status, answer_etag,
                CASE WHEN answer_with_document = 1 THEN document ELSE X'' END, NULL, answer_created, answer_order
            FROM customization_history WHERE rowid = ? AND answer_key IS NOT NULL
            ON CONFLICT (app_id, user_id, idempotency_key) DO UPDATE SET request_digest = excluded.request_digest,
                status = excluded.status, etag = excluded.etag, body = excluded.body, body_revision = NULL,
                created_at = excluded.created_at, insert_order = excluded.insert_order
            WHERE idempotent_answers.created_at < excluded.created_at
            """, [.integer(row.rowid)])
    }

    /// Gives each answer in `idempotent_answers` that names one of `rows` (by its revision, at most `upTo`) that
    /// row's document as its own copy, before the rows go.
    static func copyNamedDocuments(of rows: [HistoryLink], upTo revision: Int, user: [SQLiteValue], db: SQLiteConnection) throws {
        guard !rows.isEmpty else { return }
        var naming: [(key: [UInt8], revision: Int)] = []
        do {
            let named = try db.statement("""
                SELECT idempotency_key, body_revision FROM idempotent_answers WHERE app_id = ? AND user_id = ? AND body_revision <= ?
                """).bind(user + [.integer(revision)])
            defer { named.reset() }
            while try named.step() { naming.append((named.bytes(0), named.int(1))) }
        }
        let rowByRevision = Dictionary(rows.map { ($0.revision, $0.rowid) }, uniquingKeysWith: { newer, _ in newer })
        for answer in naming {
            guard let rowid = rowByRevision[answer.revision] else { continue }
            try db.run("""
                UPDATE idempotent_answers SET body = (SELECT document FROM customization_history WHERE rowid = ?), body_revision = NULL
                WHERE app_id = ? AND user_id = ? AND idempotency_key = CAST(? AS TEXT)
                """, [.integer(rowid)] + user + [.blob(answer.key)])
        }
    }
}
