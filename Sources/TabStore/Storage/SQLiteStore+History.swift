import CSQLite
import TabStoreSupport

/// History, idempotent answers, export and erase on the embedded store. The SQL is plain (no SQLite-only
/// functions), so another backend can run the same statements.
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

extension SQLiteStore {
    /// Housekeeping runs once every this many revisions of a user (and for every keyed write that makes no
    /// revision), not on every write: the writer's time per write is what PATCH throughput is made of.
    package static let housekeepingEvery = 16
    /// Answers each step of the sweep of everyone's expired answers looks at: four times the answers the
    /// writes between two steps can add (one each), so the sweep passes over all of them again and again,
    /// never so many that one write pays for a backlog.
    package static let expiredAnswersPerHousekeeping = 64

    package func commitCustomization(_ commit: CustomizationCommit) async throws {
        let answerBookkeeping = self.answerBookkeeping
        let (added, historyDelta) = try await writer.write { db -> (Int, Int) in
            let user: [SQLiteValue] = [.text(commit.appId), .text(commit.userId)]
            let statement = try db.statement("SELECT revision, history_head, history_floor FROM customizations WHERE app_id = ? AND user_id = ?")
                .bind(user)
            let found = try statement.step()
            let current = found ? statement.int(0) : nil
            var head = found && !statement.isNull(1) ? statement.int(1) : nil
            let floor = found ? statement.int(2) : 0
            statement.reset()
            guard (current ?? 0) == commit.expectedRevision else { throw StoreConflict.revisionMismatch(current: current ?? 0) }
            var historyDelta = 0
            do {
                if let record = commit.record, commit.historyRevisions > 0 {
                    head = try Self.storeHistory(commit, record, previous: head, db: db)
                    historyDelta += 1
                }
                // The answer before the history's retention: its housekeeping decides which answers stay, and the
                // retention gives those that name a row it removes their own copy.
                if let answer = commit.answer { try Self.storeAnswer(answer, commit, bookkeeping: answerBookkeeping, db: db) }
                if let record = commit.record {
                    // The floor only rises: a revision once past the retention never comes back, even when the
                    // retention is raised. It rises by one a revision; more means the retention was lowered (or
                    // set to 0), which applies now, not at the next housekeeping.
                    let newFloor = max(floor, record.revision - commit.historyRevisions)
                    if Self.housekeeping(record) || newFloor > floor + 1 {
                        historyDelta -= try Self.trimHistory(head: &head, keepAbove: newFloor, user: user, db: db)
                    }
                    try Self.storeRevision(record, appId: record.appId, userId: record.userId,
                                           history: (head: head, floor: newFloor), db: db)
                }
            } catch let error as StorageError where error.isConstraintViolation {
                throw StoreConflict.notFound  // the app was deleted meanwhile (foreign key)
            }
            return (commit.record != nil && current == nil ? 1 : 0, historyDelta)
        } afterCommit: { [records] _, _ in
            if let record = commit.record { records.set(appId: commit.appId, userId: commit.userId, record) }
        }
        adjustCustomizationTotal(added)
        adjustHistoryTotal(historyDelta)
    }

    /// Stores `next` as the user's current customization (the row under `appId`, `userId`), replacing any;
    /// `history.head` is the rowid of the user's newest history row (nil: none), `history.floor` the highest
    /// revision the retention cut.
    static func storeRevision(_ next: CustomizationRecord, appId: String, userId: String, history: (head: Int?, floor: Int),
                              db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at, history_head, history_floor)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, user_id) DO UPDATE SET revision = excluded.revision, schema_version = excluded.schema_version,
                document = excluded.document, updated_at = excluded.updated_at, history_head = excluded.history_head,
                history_floor = excluded.history_floor
            """, [.text(appId), .text(userId), .integer(next.revision), .integer(next.schemaVersion),
                  .blob(next.document), .text(next.updatedAt), history.head.map { .integer($0) } ?? .null, .integer(history.floor)])
    }

    /// Whether this write does the user's housekeeping: every `housekeepingEvery`-th revision, and every
    /// write that makes none (those are rare: a keyed write that changes nothing).
    private static func housekeeping(_ record: CustomizationRecord?) -> Bool {
        guard let record else { return true }
        return record.revision % housekeepingEvery == 0
    }

    /// The revision whose history row holds `commit`'s answer body byte for byte (the write stores that row in
    /// the same transaction), or nil when the answer keeps its own copy.
    package static func answerBodyRevision(_ commit: CustomizationCommit) -> Int? {
        guard let answer = commit.answer, let record = commit.record, commit.historyRevisions > 0,
              !answer.body.isEmpty, answer.body == record.document else { return nil }
        return record.revision
    }

    /// Stores the answer; an expired one under the same key gives way, a live one means another write won.
    /// An answer that is the new revision's document names its history row instead of copying the bytes.
    /// Each answer takes the next number of the insertion order (`answer_order`, one counter for the whole
    /// database, on a page a batch shares): the order the cap evicts in. A replaced expired answer is a new
    /// one, numbered anew.
    private static func storeAnswer(_ answer: IdempotentAnswer, _ commit: CustomizationCommit, bookkeeping sweep: AnswerBookkeeping,
                                    db: SQLiteConnection) throws {
        let user: [SQLiteValue] = [.text(commit.appId), .text(commit.userId)]
        let bodyRevision = Self.answerBodyRevision(commit)
        let order = try sweep.nextOrder(db)
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
        guard Self.housekeeping(commit.record) else { return }
        // The user's expired answers go first (their rows are next to each other: one short scan).
        try db.run("DELETE FROM idempotent_answers WHERE app_id = ? AND user_id = ? AND created_at < ?",
                   user + [.integer(commit.answersExpireBefore)])
        // Bounded per user: past the cap the answers stored first go (a client retries within minutes, not 1,000
        // writes later); checked at the user's housekeeping, so at most `housekeepingEvery` more are ever kept.
        // Strictly in insertion order: never by time (a burst shares its second) nor by key (a recent key that
        // sorts low would go first, and its retry would be applied twice). Answers from before migration 5 are
        // all 0, older than every newer one; among themselves, by time then key as they were.
        let kept = try db.scalarInt("SELECT count(*) FROM idempotent_answers WHERE app_id = ? AND user_id = ?", user) ?? 0
        if kept > commit.maxAnswersPerUser {
            try db.run("""
                DELETE FROM idempotent_answers WHERE app_id = ? AND user_id = ? AND idempotency_key IN (
                    SELECT idempotency_key FROM idempotent_answers WHERE app_id = ? AND user_id = ?
                    ORDER BY insert_order, created_at, idempotency_key LIMIT ?)
                """, user + user + [.integer(kept - commit.maxAnswersPerUser)])
        }
        try Self.sweepExpiredAnswers(sweep, before: commit.answersExpireBefore, db: db)
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
            """).bind(from + [.integer(Self.expiredAnswersPerHousekeeping - 1)])
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

    package func revisionFloor(appId: String, userId: String) async throws -> Int {
        try await readers.read { db in
            try db.scalarInt("SELECT last_revision FROM revision_floors WHERE app_id = ? AND user_id = ?", [.text(appId), .text(userId)]) ?? 0
        }
    }

    package func idempotentAnswer(appId: String, userId: String, key: String, notBefore: Int) async throws -> IdempotentAnswer? {
        try await readers.read { db in try db.transaction(immediate: false) {
            let user: [SQLiteValue] = [.text(appId), .text(userId)]
            let statement = try db.statement("""
                SELECT request_digest, status, etag, body, created_at, body_revision FROM idempotent_answers
                WHERE app_id = ? AND user_id = ? AND idempotency_key = ? AND created_at >= ?
                """).bind(user + [.text(key), .integer(notBefore)])
            defer { statement.reset() }
            guard try statement.step() else { return nil }
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

    private static let historyColumns = "revision, schema_version, change_kind, operations, document, updated_at"

    private static func historyRow(_ statement: SQLiteStatement) -> HistoryRecord {
        HistoryRecord(revision: statement.int(0), schemaVersion: statement.int(1), change: statement.text(2),
                      operations: statement.isNull(3) ? nil : statement.bytes(3), document: statement.bytes(4), updatedAt: statement.text(5))
    }

    package func history(appId: String, userId: String, before: Int?, limit: Int, keep: Int) async throws -> [HistoryRecord] {
        // One snapshot for the whole walk (BEGIN): a write committed meanwhile is seen entirely or not at all.
        try await readers.read { db in
            try db.transaction(immediate: false) { try Self.history(db, appId: appId, userId: userId, before: before, limit: limit, keep: keep) }
        }
    }

    /// The history row `rowid`.
    private static func historyRecord(rowid: Int, db: SQLiteConnection) throws -> HistoryRecord? {
        let statement = try db.statement("SELECT \(Self.historyColumns) FROM customization_history WHERE rowid = ?").bind([.integer(rowid)])
        defer { statement.reset() }
        return try statement.step() ? Self.historyRow(statement) : nil
    }

    /// The links of the last `keep` revisions (above the newest row's revision minus `keep`), newest first: older
    /// rows wait for the user's next housekeeping and are never read.
    private static func keptLinks(_ user: [SQLiteValue], keep: Int, db: SQLiteConnection,
                                  while condition: (HistoryLink) -> Bool = { _ in true }) throws -> [HistoryLink] {
        let (head, cut) = try historyHeadAndFloor(user, db: db)
        var keptAbove: Int?
        return try walk(from: head, user: user, db: db) { link in
            let floor = keptAbove ?? max(cut, link.revision.subtractingReportingOverflow(keep).partialValue)
            keptAbove = floor
            return link.revision > floor && condition(link)
        }
    }

    private static func history(_ db: SQLiteConnection, appId: String, userId: String, before: Int?, limit: Int, keep: Int) throws -> [HistoryRecord] {
        let user: [SQLiteValue] = [.text(appId), .text(userId)]
        let below = before ?? Int.max
        var listed = 0
        let links = try keptLinks(user, keep: keep, db: db) { link in
            guard listed < limit else { return false }
            if link.revision < below { listed += 1 }
            return true
        }
        return try links.filter { $0.revision < below }.compactMap { try historyRecord(rowid: $0.rowid, db: db) }
    }

    package func historyRecord(appId: String, userId: String, revision: Int, keep: Int) async throws -> HistoryRecord? {
        try await readers.read { db in try db.transaction(immediate: false) {
            let user: [SQLiteValue] = [.text(appId), .text(userId)]
            guard let link = try Self.keptLinks(user, keep: keep, db: db, while: { $0.revision >= revision }).last,
                  link.revision == revision else { return nil }
            return try Self.historyRecord(rowid: link.rowid, db: db)
        } }
    }

    /// The apps to look in: `appId` alone, or every app (a primary-key lookup each, no scan of user rows).
    private static func appIds(_ db: SQLiteConnection, _ appId: String?) throws -> [String] {
        if let appId { return [appId] }
        let statement = try db.statement("SELECT id FROM apps ORDER BY id")
        defer { statement.reset() }
        var ids: [String] = []
        while try statement.step() { ids.append(statement.text(0)) }
        return ids
    }

    package func userData(userId: String, appId: String?, keep: Int) async throws -> [UserData] {
        try await readers.read { db in try db.transaction(immediate: false) {
            var found: [UserData] = []
            for app in try Self.appIds(db, appId) {
                let record = try Self.customizationRow(db, appId: app, userId: userId)
                let history = try Self.history(db, appId: app, userId: userId, before: nil, limit: Int.max, keep: keep)
                let statement = try db.statement("""
                    SELECT idempotency_key, status, created_at FROM idempotent_answers WHERE app_id = ? AND user_id = ?
                    ORDER BY insert_order DESC, created_at DESC, idempotency_key
                    """).bind([.text(app), .text(userId)])
                var answers: [(key: String, status: Int, createdAt: Int)] = []
                while try statement.step() { answers.append((statement.text(0), statement.int(1), statement.int(2))) }
                statement.reset()
                guard record != nil || !history.isEmpty || !answers.isEmpty else { continue }
                found.append(UserData(appId: app, customization: record, history: history, answers: answers))
            }
            return found
        } }
    }

    package func appsHoldingUser(userId: String) async throws -> [String] {
        try await readers.read { db in
            try Self.appIds(db, nil).filter { app in
                let user: [SQLiteValue] = [.text(app), .text(userId)]
                // A history hangs from its customization row (no row, no history).
                return try db.scalarInt("SELECT 1 FROM customizations WHERE app_id = ? AND user_id = ?", user) != nil
                    || db.scalarInt("SELECT 1 FROM idempotent_answers WHERE app_id = ? AND user_id = ? LIMIT 1", user) != nil
            }
        }
    }

    package func eraseUser(userId: String, appId: String) async throws -> Bool {
        let user: [SQLiteValue] = [.text(appId), .text(userId)]
        let (erased, customizations, historyRows) = try await writer.write { db -> (Bool, Int, Int) in
            let current = try db.scalarInt("SELECT revision FROM customizations WHERE app_id = ? AND user_id = ?", user) ?? 0
            let head = try Self.historyHead(user, db: db)
            let newest = try Self.link(head, after: nil, user: user, db: db)?.revision ?? 0
            let floor = try db.scalarInt("SELECT last_revision FROM revision_floors WHERE app_id = ? AND user_id = ?", user) ?? 0
            // Only the counter stays: the next revision is above every one this user ever had here.
            if max(current, newest) > floor {
                try db.run("""
                    INSERT INTO revision_floors (app_id, user_id, last_revision) VALUES (?, ?, ?)
                    ON CONFLICT (app_id, user_id) DO UPDATE SET last_revision = excluded.last_revision
                    """, user + [.integer(max(current, newest))])
            }
            let historyRows = try Self.removeHistory(head: head, user: user, db: db)
            try db.run("DELETE FROM customizations WHERE app_id = ? AND user_id = ?", user)
            let customizations = db.changes
            try db.run("DELETE FROM idempotent_answers WHERE app_id = ? AND user_id = ?", user)
            return (customizations + historyRows + db.changes > 0, customizations, historyRows)
        } afterCommit: { [records] _, _, _ in
            records.set(appId: appId, userId: userId, nil)
        }
        adjustCustomizationTotal(-customizations)
        adjustHistoryTotal(-historyRows)
        return erased
    }

    /// From memory, like `customizationCount`.
    package func historyCount() async throws -> Int {
        historyTotal.withLock { $0 }
    }

    /// Called only after the write that changed the count committed.
    func adjustHistoryTotal(_ delta: Int) {
        if delta != 0 { historyTotal.withLock { $0 += delta } }
    }
}
