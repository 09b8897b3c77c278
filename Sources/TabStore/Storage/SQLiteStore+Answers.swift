import CSQLite
import TabStoreStore
import TabStoreSupport

/// The writer's bookkeeping for idempotent answers; only the writer thread uses it.
final class AnswerBookkeeping: Sendable {
    static let start: [SQLiteValue] = [.text(""), .text(""), .text("")]
    /// Where the sweep of everyone's expired answers goes on from: the last (app, user, key) it looked at. A
    /// position past rows a failed batch did not remove only means they wait for the next round.
    let position = Locked(AnswerBookkeeping.start)
    private struct Order {
        /// The last insertion number given, read from the database (`answer_order`) at the first answer.
        var last: Int?
        /// The counter's value as this writer stores it: every number given is at or below it.
        var reserved = 0
        /// Whether `reserved` is not known to be committed yet: every batch stores it until one commits.
        var unstored = false
    }

    /// Numbers are reserved this many at a time: the counter is written once per block, not once per batch (a
    /// page in every batch's WAL), and a restart skips what was left of the block (gaps, never a repeat).
    static let orderBlock = 1 << 20

    private let order = Locked(Order())

    /// The next insertion number for an answer. Past the reserved block the next block is reserved, and stored
    /// in the same transaction as the answer that takes its first number (`storeOrder`), so after a restart
    /// numbering goes on above every committed answer.
    func nextOrder(_ db: SQLiteConnection) throws -> Int {
        try order.withLock { order in
            if order.last == nil {
                let stored = try db.scalarInt("SELECT value FROM tabstore_counters WHERE name = 'answer_order'") ?? 0
                order.last = stored
                order.reserved = stored
            }
            let next = (order.last ?? 0) + 1
            order.last = next
            if next > order.reserved {
                order.reserved = next - 1 + Self.orderBlock
                order.unstored = true
            }
            return next
        }
    }

    /// Stores the reserved block's end while no batch that stored it has committed (called before each batch's
    /// COMMIT): a batch that fails takes its numbers' reservation with it, and the next batch stores it again.
    func storeOrder(_ db: SQLiteConnection) throws {
        try order.withLock { order in
            guard order.unstored else { return }
            try db.run("UPDATE tabstore_counters SET value = ? WHERE name = 'answer_order'", [.integer(order.reserved)])
        }
    }

    /// A batch committed: the reservation it stored (if any) is durable.
    func batchCommitted() {
        order.withLock { $0.unstored = false }
    }
}

/// Idempotent answers on the embedded store: in `idempotent_answers`, or in the history row their write
/// appended (`HistoryAnswers`). A key has at most one live answer, in one place or the other.
extension SQLiteStore {
    /// Stores the answer in `idempotent_answers` unless the write's history row holds it (`inTable` false); an
    /// expired one under the same key gives way, a live one means another write won. An answer there that is
    /// the new revision's document names its history row instead of copying the bytes. Then, at the user's
    /// housekeeping, the user's expired answers go, the cap applies (to these and to the live answers of the
    /// history rows `answers` names), and a step of the sweep of everyone's expired answers runs.
    /// Each answer takes the next number of the insertion order (`answer_order`, one counter for the whole
    /// database, on a page a batch shares): the order the cap evicts in. A replaced expired answer is a new
    /// one, numbered anew.
    static func storeAnswer(_ answer: IdempotentAnswer, _ commit: CustomizationCommit, inTable: Bool, answers: inout HistoryAnswers,
                            bookkeeping sweep: AnswerBookkeeping, db: SQLiteConnection) throws {
        let user: [SQLiteValue] = [.text(commit.appId), .text(commit.userId)]
        if inTable { try Self.insertAnswer(answer, commit, order: try sweep.nextOrder(db), db: db) }
        guard StorePolicy.housekeeping(commit.record) else { return }
        // The user's expired answers go first (their rows are next to each other: one short scan).
        try db.run("DELETE FROM idempotent_answers WHERE app_id = ? AND user_id = ? AND created_at < ?",
                   user + [.integer(commit.answersExpireBefore)])
        // Bounded per user: past the cap the answers stored first go (a client retries within minutes, not 1,000
        // writes later); checked at the user's housekeeping, so at most `housekeepingEvery` more are ever kept.
        // Strictly in insertion order: never by time (a burst shares its second) nor by key (a recent key that
        // sorts low would go first, and its retry would be applied twice). Answers from before migration 5 are
        // all 0, older than every newer one; among themselves, by time then key as they were. The live answers
        // in history rows count too, in the same order (`answer_order`).
        let kept = try db.scalarInt("SELECT count(*) FROM idempotent_answers WHERE app_id = ? AND user_id = ?", user) ?? 0
        if kept + answers.count > commit.maxAnswersPerUser {
            try Self.evictOldestAnswers(beyond: commit.maxAnswersPerUser, inTable: kept, user: user, answers: &answers,
                                        notBefore: commit.answersExpireBefore, db: db)
        }
        try Self.sweepExpiredAnswers(sweep, before: commit.answersExpireBefore, db: db)
    }

    /// Keeps the user's `cap` newest answers in insertion order (then time, then key bytes), wherever they are
    /// (`inTable` of them in `idempotent_answers`): an older row of `idempotent_answers` goes; a history row
    /// stays, without its answer. An entry of `answers` whose row holds no live answer leaves the list too, so
    /// only live answers count.
    private static func evictOldestAnswers(beyond cap: Int, inTable: Int, user: [SQLiteValue], answers: inout HistoryAnswers,
                                           notBefore: Int, db: SQLiteConnection) throws {
        // (order, time, key, history rowid or nil for a row of `idempotent_answers`)
        var candidates: [(order: Int, createdAt: Int, key: [UInt8], rowid: Int?)] = []
        for entry in answers.entries {
            let rowid = Int(entry.rowid)
            let statement = try db.statement("""
                SELECT answer_order, answer_created, answer_key FROM customization_history
                WHERE rowid = ? AND app_id = ? AND user_id = ? AND answer_key IS NOT NULL AND answer_created >= ?
                """).bind([.integer(rowid)] + user + [.integer(notBefore)])
            defer { statement.reset() }
            if try statement.step(), !candidates.contains(where: { $0.rowid == rowid }) {
                candidates.append((statement.int(0), statement.int(1), statement.bytes(2), rowid))
            } else {
                answers.remove(rowid: rowid)  // nothing live there (or named twice): the entry only takes room
            }
        }
        let excess = inTable + candidates.count - cap
        guard excess > 0 else { return }
        do {
            let statement = try db.statement("""
                SELECT insert_order, created_at, idempotency_key FROM idempotent_answers WHERE app_id = ? AND user_id = ?
                ORDER BY insert_order, created_at, idempotency_key LIMIT ?
                """).bind(user + [.integer(excess)])
            defer { statement.reset() }
            while try statement.step() { candidates.append((statement.int(0), statement.int(1), statement.bytes(2), nil)) }
        }
        candidates.sort { lhs, rhs in
            if lhs.order != rhs.order { return lhs.order < rhs.order }
            if lhs.createdAt != rhs.createdAt { return lhs.createdAt < rhs.createdAt }
            return lhs.key.lexicographicallyPrecedes(rhs.key)
        }
        for candidate in candidates.prefix(excess) {
            if let rowid = candidate.rowid {
                try db.run("""
                    UPDATE customization_history SET answer_key = NULL, answer_digest = NULL, answer_status = NULL, answer_etag = NULL,
                        answer_with_document = NULL, answer_created = NULL, answer_order = NULL WHERE rowid = ?
                    """, [.integer(rowid)])
                answers.remove(rowid: rowid)
            } else {
                // The key's stored bytes as they are (CAST keeps them), not through a Swift String.
                try db.run("DELETE FROM idempotent_answers WHERE app_id = ? AND user_id = ? AND idempotency_key = CAST(? AS TEXT)",
                           user + [.blob(candidate.key)])
            }
        }
    }

    /// The answer's row in `idempotent_answers`, numbered `order` in the insertion order.
    private static func insertAnswer(_ answer: IdempotentAnswer, _ commit: CustomizationCommit, order: Int, db: SQLiteConnection) throws {
        let user: [SQLiteValue] = [.text(commit.appId), .text(commit.userId)]
        let bodyRevision = StorePolicy.answerBodyRevision(commit)
        try db.run("""
            INSERT INTO idempotent_answers (app_id, user_id, idempotency_key, request_digest, status, etag, body, body_revision, created_at,
                insert_order)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, user_id, idempotency_key) DO UPDATE SET request_digest = excluded.request_digest,
                status = excluded.status, etag = excluded.etag, body = excluded.body, body_revision = excluded.body_revision,
                created_at = excluded.created_at, insert_order = excluded.insert_order
            WHERE idempotent_answers.created_at < ?
            """, user + [.text(answer.key), .blob(answer.requestDigest), .integer(answer.status), answer.etag.map { .text($0) } ?? .null,
                         bodyRevision == nil ? .blob(answer.body) : .null, bodyRevision.map { .integer($0) } ?? .null,
                         .integer(answer.createdAt), .integer(order), .integer(commit.answersExpireBefore)])
        if db.changes == 0 { throw StoreConflict.answerExists }
    }

    /// Everyone's expired answers (a user who never writes again has no housekeeping of their own), in bounded
    /// steps: each looks at the next `expiredAnswersPerHousekeeping` answers in key order after where the last
    /// step ended and removes the expired ones among them; past the last answer the next step starts over.
    private static func sweepExpiredAnswers(_ sweep: AnswerBookkeeping, before: Int, db: SQLiteConnection) throws {
        let key = "(app_id, user_id, idempotency_key)"
        let from = sweep.position.withLock { $0 }
        let statement = try db.statement("""
            SELECT app_id, user_id, idempotency_key FROM idempotent_answers WHERE \(key) > (?, ?, ?)
            ORDER BY app_id, user_id, idempotency_key LIMIT 1 OFFSET ?
            """).bind(from + [.integer(StorePolicy.expiredAnswersPerHousekeeping - 1)])
        let last: [SQLiteValue]? = try statement.step() ? [.text(statement.text(0)), .text(statement.text(1)), .text(statement.text(2))] : nil
        statement.reset()
        if let last {
            try db.run("DELETE FROM idempotent_answers WHERE \(key) > (?, ?, ?) AND \(key) <= (?, ?, ?) AND created_at < ?",
                       from + last + [.integer(before)])
        } else {
            // Fewer than a step's worth are left after the position: the rest, then from the start again.
            try db.run("DELETE FROM idempotent_answers WHERE \(key) > (?, ?, ?) AND created_at < ?", from + [.integer(before)])
        }
        sweep.position.withLock { $0 = last ?? AnswerBookkeeping.start }
    }

    package func idempotentAnswer(appId: String, userId: String, key: String, notBefore: Int) async throws -> IdempotentAnswer? {
        try await readers.read { db in try db.transaction(immediate: false) { () throws -> IdempotentAnswer? in
            let user: [SQLiteValue] = [.text(appId), .text(userId)]
            let statement = try db.statement("""
                SELECT request_digest, status, etag, body, created_at, body_revision FROM idempotent_answers
                WHERE app_id = ? AND user_id = ? AND idempotency_key = ? AND created_at >= ?
                """).bind(user + [.text(key), .integer(notBefore)])
            defer { statement.reset() }
            guard try statement.step() else { return try Self.historyAnswer(key, user: user, notBefore: notBefore, db: db) }
            // The body is the answer's own copy, or the document of the history row it names (kept in the chain
            // while the answer is: the retention gives the answer a copy before it removes the row).
            var body = statement.bytes(3)
            if !statement.isNull(5) {
                let revision = statement.int(5)
                let named = try Self.walk(from: Self.historyHead(user, db: db), user: user, db: db) { $0.revision >= revision }.last
                guard let named, named.revision == revision, let document = try Self.historyRecord(rowid: named.rowid, db: db)?.document else {
                    // Never replay other bytes than the first answer's.
                    throw StorageError(extendedCode: SQLITE_CORRUPT, message: "the idempotent answer \(key) names a history row that is gone")
                }
                body = document
            }
            return IdempotentAnswer(key: key, requestDigest: statement.bytes(0), status: statement.int(1),
                                    etag: statement.isNull(2) ? nil : statement.text(2), body: body, createdAt: statement.int(4))
        } }
    }

    /// Whether `commit`'s answer goes in the history row it appends: there is one, the answer's body is that
    /// row's document or empty, and the user's list has room (under the cap too).
    static func answerFitsHistory(_ commit: CustomizationCommit, listed answers: HistoryAnswers) -> Bool {
        guard let answer = commit.answer, let record = commit.record, commit.historyRevisions > 0 else { return false }
        return (answer.body.isEmpty || answer.body == record.document)
            && answers.count < min(HistoryAnswers.capacity, commit.maxAnswersPerUser)
    }

    /// Throws `answerExists` when a live answer (made at or after `notBefore`) under `key` is in a history row the
    /// user's list names, or, with `inTable`, in `idempotent_answers` (a write storing there finds it by the
    /// key's conflict instead).
    static func requireKeyFree(_ key: String, answers: HistoryAnswers, user: [SQLiteValue], notBefore: Int, inTable: Bool,
                               db: SQLiteConnection) throws {
        if try historyAnswerRow(key, answers: answers, user: user, notBefore: notBefore, db: db) != nil {
            throw StoreConflict.answerExists
        }
        if inTable, try db.scalarInt("""
            SELECT 1 FROM idempotent_answers WHERE app_id = ? AND user_id = ? AND idempotency_key = ? AND created_at >= ?
            """, user + [.text(key), .integer(notBefore)]) != nil {
            throw StoreConflict.answerExists
        }
    }

    /// The rowid of the newest history row the user's list names that holds a live answer under `key`: the row
    /// is the user's (app and user compared), its key the same bytes, its answer made at or after `notBefore`.
    private static func historyAnswerRow(_ key: String, answers: HistoryAnswers, user: [SQLiteValue], notBefore: Int,
                                         db: SQLiteConnection) throws -> Int? {
        let bytes = Array(key.utf8)
        for rowid in answers.rows(mayHolding: key, notBefore: notBefore) {
            let statement = try db.statement("""
                SELECT answer_key FROM customization_history
                WHERE rowid = ? AND app_id = ? AND user_id = ? AND answer_key IS NOT NULL AND answer_created >= ?
                """).bind([.integer(rowid)] + user + [.integer(notBefore)])
            defer { statement.reset() }
            if try statement.step(), statement.bytes(0) == bytes { return rowid }
        }
        return nil
    }

    /// The live answer under `key` a history row of the user holds, when the user's list names one.
    private static func historyAnswer(_ key: String, user: [SQLiteValue], notBefore: Int, db: SQLiteConnection) throws -> IdempotentAnswer? {
        let row = try db.statement("SELECT history_answers FROM customizations WHERE app_id = ? AND user_id = ?").bind(user)
        guard try row.step() else {
            row.reset()
            return nil
        }
        let answers = HistoryAnswers(row.bytes(0))
        row.reset()
        guard let rowid = try historyAnswerRow(key, answers: answers, user: user, notBefore: notBefore, db: db) else { return nil }
        let statement = try db.statement("""
            SELECT answer_digest, answer_status, answer_etag, answer_with_document, document, answer_created
            FROM customization_history WHERE rowid = ?
            """).bind([.integer(rowid)])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return IdempotentAnswer(key: key, requestDigest: statement.bytes(0), status: statement.int(1),
                                etag: statement.isNull(2) ? nil : statement.text(2), body: statement.int(3) == 1 ? statement.bytes(4) : [],
                                createdAt: statement.int(5))
    }

    /// Every answer kept for the user, live or expired, in `idempotent_answers` and in history rows: newest
    /// first by insertion order (then time, then key bytes), as the export lists them.
    static func storedAnswers(_ user: [SQLiteValue], db: SQLiteConnection) throws -> [(key: String, status: Int, createdAt: Int)] {
        var answers: [(key: [UInt8], status: Int, createdAt: Int, order: Int)] = []
        do {
            let statement = try db.statement("""
                SELECT idempotency_key, status, created_at, insert_order FROM idempotent_answers WHERE app_id = ? AND user_id = ?
                """).bind(user)
            defer { statement.reset() }
            while try statement.step() { answers.append((statement.bytes(0), statement.int(1), statement.int(2), statement.int(3))) }
        }
        for link in try walk(from: historyHead(user, db: db), user: user, db: db, while: { _ in true }) where link.answerKey != nil {
            let statement = try db.statement("""
                SELECT answer_key, answer_status, answer_created, answer_order FROM customization_history WHERE rowid = ?
                """).bind([.integer(link.rowid)])
            defer { statement.reset() }
            if try statement.step() { answers.append((statement.bytes(0), statement.int(1), statement.int(2), statement.int(3))) }
        }
        answers.sort { lhs, rhs in
            if lhs.order != rhs.order { return lhs.order > rhs.order }
            if lhs.createdAt != rhs.createdAt { return lhs.createdAt > rhs.createdAt }
            return lhs.key.lexicographicallyPrecedes(rhs.key)
        }
        return answers.map { (String(decoding: $0.key, as: UTF8.self), $0.status, $0.createdAt) }
    }
}
