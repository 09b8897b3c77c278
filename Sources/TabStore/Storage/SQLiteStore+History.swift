import CSQLite
import TabStoreStore
import TabStoreSupport

/// History, idempotent answers, export and erase on the embedded store.
extension SQLiteStore {
    package func commitCustomization(_ commit: CustomizationCommit) async throws {
        let answerBookkeeping = self.answerBookkeeping
        _ = try await writer.write { db -> (Int, Int) in
            let user: [SQLiteValue] = [.text(commit.appId), .text(commit.userId)]
            let statement = try db.statement("""
                SELECT revision, history_head, history_floor, history_answers FROM customizations WHERE app_id = ? AND user_id = ?
                """).bind(user)
            let found = try statement.step()
            let current = found ? statement.int(0) : nil
            var head = found && !statement.isNull(1) ? statement.int(1) : nil
            let floor = found ? statement.int(2) : 0
            var answers = found ? HistoryAnswers(statement.bytes(3)) : HistoryAnswers()
            let listed = answers
            statement.reset()
            guard (current ?? 0) == commit.expectedRevision else { throw StoreConflict.revisionMismatch(current: current ?? 0) }
            // A user without a row may have been erased after the write read its floor: the revision must be above the
            // floor as it is now, in this transaction, or one revision number would name two contents.
            if current == nil, let record = commit.record,
               record.revision <= (try db.scalarInt("SELECT last_revision FROM revision_floors WHERE app_id = ? AND user_id = ?", user) ?? 0) {
                throw StoreConflict.revisionMismatch(current: 0)
            }
            var historyDelta = 0
            do {
                // The answer goes in the history row this write appends when it fits (HistoryAnswers), else in
                // `idempotent_answers`; either way no live answer may have its key, in either place.
                var held: (answer: IdempotentAnswer, order: Int)?
                if let answer = commit.answer {
                    answers.removeExpired(before: commit.answersExpireBefore)
                    let fits = Self.answerFitsHistory(commit, listed: answers)
                    try Self.requireKeyFree(answer.key, answers: answers, user: user, notBefore: commit.answersExpireBefore,
                                            inTable: fits, db: db)
                    if fits { held = (answer, try answerBookkeeping.nextOrder(db)) }
                }
                if let record = commit.record, commit.historyRevisions > 0 {
                    let row = try Self.storeHistory(commit, record, previous: head, answer: held, db: db)
                    head = row
                    historyDelta += 1
                    if let held { answers.add(key: held.answer.key, createdAt: held.answer.createdAt, rowid: row) }
                }
                // The answer before the history's retention: its housekeeping decides which answers stay, and the
                // retention gives those that name a row it removes their own copy (or moves the row's own answer).
                if let answer = commit.answer {
                    try Self.storeAnswer(answer, commit, inTable: held == nil, answers: &answers, bookkeeping: answerBookkeeping, db: db)
                }
                // A write that makes no revision leaves the customization row as it is, but not the list its
                // housekeeping changed (answers evicted from history rows no longer count).
                if commit.record == nil, found, answers != listed {
                    try db.run("UPDATE customizations SET history_answers = ? WHERE app_id = ? AND user_id = ?",
                               [answers.stored.map { .blob($0) } ?? .null] + user)
                }
                if let record = commit.record {
                    // The floor only rises: a revision once past the retention never comes back, even when the
                    // retention is raised. It rises by one a revision; more means the retention was lowered (or
                    // set to 0), which applies now, not at the next housekeeping.
                    // With the floor at 0 (fewer revisions than the retention) no row can be cut: revisions start at 1.
                    let newFloor = max(floor, record.revision - commit.historyRevisions)
                    if newFloor > 0, StorePolicy.housekeeping(record) || newFloor > floor + 1 {
                        historyDelta -= try Self.trimHistory(head: &head, keepAbove: newFloor, user: user, answers: &answers,
                                                             answersFrom: commit.answersExpireBefore, db: db)
                    }
                    try Self.storeRevision(record, appId: record.appId, userId: record.userId,
                                           history: (head: head, floor: newFloor), answers: answers, db: db)
                }
            } catch let error as StorageError where error.isConstraintViolation {
                throw StoreConflict.notFound  // the app was deleted meanwhile (foreign key)
            }
            return (commit.record != nil && current == nil ? 1 : 0, historyDelta)
        } afterCommit: { [records, self] added, historyDelta in
            if let record = commit.record { records.set(appId: commit.appId, userId: commit.userId, record) }
            // Here, not after the caller's await: a write that commits after its caller's bound passed counts too.
            adjustCustomizationTotal(added)
            adjustHistoryTotal(historyDelta)
        } late: { [self] in
            changed(.customization(appId: commit.appId, userId: commit.userId))
        }
    }

    /// Stores `next` as the user's current customization (the row under `appId`, `userId`), replacing any;
    /// `history.head` is the rowid of the user's newest history row (nil: none), `history.floor` the highest
    /// revision the retention cut, `answers` the list of answers its history rows hold (nil: left as stored).
    static func storeRevision(_ next: CustomizationRecord, appId: String, userId: String, history: (head: Int?, floor: Int),
                              answers: HistoryAnswers? = nil, db: SQLiteConnection) throws {
        // The app may have been deleted and created again since the write was validated: its versions then start
        // above the floor, so a version at or below it was the old app's, and the write must not land here.
        if let floor = try db.scalarInt("SELECT schema_version_floor FROM apps WHERE id = ?", [.text(appId)]), floor > 0, next.writtenUnder <= floor {
            throw StoreConflict.notFound
        }
        let values: [SQLiteValue] = [.text(appId), .text(userId), .integer(next.revision), .integer(next.schemaVersion),
                                     .blob(next.document), .text(next.updatedAt), history.head.map { .integer($0) } ?? .null, .integer(history.floor)]
        guard let answers else {
            // The list of answers in history rows stays as it is (a new row has none).
            try db.run("""
                INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at, history_head, history_floor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, user_id) DO UPDATE SET revision = excluded.revision, schema_version = excluded.schema_version,
                    document = excluded.document, updated_at = excluded.updated_at, history_head = excluded.history_head,
                    history_floor = excluded.history_floor
                """, values)
            return
        }
        try db.run("""
            INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at, history_head, history_floor,
                history_answers)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, user_id) DO UPDATE SET revision = excluded.revision, schema_version = excluded.schema_version,
                document = excluded.document, updated_at = excluded.updated_at, history_head = excluded.history_head,
                history_floor = excluded.history_floor, history_answers = excluded.history_answers
            """, values + [answers.stored.map { .blob($0) } ?? .null])
    }

    package func revisionFloor(appId: String, userId: String) async throws -> Int {
        try await readers.read { db in
            try db.scalarInt("SELECT last_revision FROM revision_floors WHERE app_id = ? AND user_id = ?", [.text(appId), .text(userId)]) ?? 0
        }
    }

    private static let historyColumns = "revision, schema_version, change_kind, operations, document, updated_at, actor, target_revision"

    private static func historyRow(_ statement: SQLiteStatement) -> HistoryRecord {
        HistoryRecord(revision: statement.int(0), schemaVersion: statement.int(1), change: statement.text(2),
                      operations: statement.isNull(3) ? nil : statement.bytes(3), document: statement.bytes(4), updatedAt: statement.text(5),
                      actor: statement.isNull(6) ? nil : statement.text(6), targetRevision: statement.isNull(7) ? nil : statement.int(7))
    }

    package func history(appId: String, userId: String, before: Int?, limit: Int, keep: Int, maxBytes: Int) async throws -> [HistoryRecord] {
        // One snapshot for the whole walk (BEGIN): a write committed meanwhile is seen entirely or not at all.
        try await readers.read { db in
            try db.transaction(immediate: false) {
                try Self.history(db, appId: appId, userId: userId, before: before, limit: limit, keep: keep, maxBytes: maxBytes)
            }
        }
    }

    /// The history row `rowid`.
    static func historyRecord(rowid: Int, db: SQLiteConnection) throws -> HistoryRecord? {
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

    private static func history(_ db: SQLiteConnection, appId: String, userId: String, before: Int?, limit: Int, keep: Int,
                                maxBytes: Int = Int.max) throws -> [HistoryRecord] {
        let user: [SQLiteValue] = [.text(appId), .text(userId)]
        let below = before ?? Int.max
        var listed = 0
        let links = try keptLinks(user, keep: keep, db: db) { link in
            guard listed < limit else { return false }
            if link.revision < below { listed += 1 }
            return true
        }
        var rows: [HistoryRecord] = []
        var bytes = 0
        for link in links where link.revision < below {
            guard let row = try historyRecord(rowid: link.rowid, db: db) else { continue }
            rows.append(row)
            bytes = bytes.addingReportingOverflow(row.document.count + (row.operations?.count ?? 0)).partialValue
            // Past the budget after more than one row: this row starts the next page.
            if rows.count > 1, bytes > maxBytes { break }
        }
        return rows
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
                let answers = try Self.storedAnswers([.text(app), .text(userId)], db: db)
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
        let (erased, _, _) = try await writer.write { db -> (Bool, Int, Int) in
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
        } afterCommit: { [records, self] _, customizations, historyRows in
            records.set(appId: appId, userId: userId, nil)
            adjustCustomizationTotal(-customizations)
            adjustHistoryTotal(-historyRows)
        } late: { [self] in
            changed(.customization(appId: appId, userId: userId))
        }
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
