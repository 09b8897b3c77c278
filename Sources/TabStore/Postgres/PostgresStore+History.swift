import TabStoreStore
import TabStoreSupport

/// History, idempotent answers, export and erase on PostgreSQL: the same retention, answers and housekeeping
/// (`StorePolicy.housekeepingEvery`) as the embedded store, in one transaction per write. The answers stay in
/// `idempotent_answers` here (one row each, naming its history row when it is that row's document).
extension PostgresStore {
    package func commitCustomization(_ commit: CustomizationCommit) async throws {
        let inTurn = Self.holdsWriteTurn
        try await transaction { db in
            // A write outside the user's write turn waits while another replica's write holds it, so the one holding
            // it (it lost a compare-and-set already) cannot lose again: it commits next.
            if !inTurn {
                try db.query(
                    "SELECT pg_advisory_xact_lock_shared($1)", [.integer(Self.userLockKey(appId: commit.appId, userId: commit.userId, turn: true))])
            }
            try Self.lockApp(db, commit.appId, writtenUnder: commit.record?.writtenUnder)
            let current = try Self.customizationRow(db, appId: commit.appId, userId: commit.userId, lock: true)?.revision ?? 0
            guard current == commit.expectedRevision else { throw StoreConflict.revisionMismatch(current: current) }
            // No row to lock: an erase on another replica may be raising the floor right now. Both take the user's
            // transaction-scoped advisory lock, and the revision must be above the floor as it is inside this
            // transaction (the one read before it may be stale), or one revision number would name two contents.
            if current == 0, let record = commit.record {
                try Self.lockUser(db, appId: commit.appId, userId: commit.userId)
                let floor = try db.query("SELECT last_revision FROM revision_floors WHERE app_id = $1 AND user_id = $2",
                                         [.text(commit.appId), .text(commit.userId)]).scalarInt ?? 0
                let again = try Self.customizationRow(db, appId: commit.appId, userId: commit.userId, lock: true)?.revision ?? 0
                guard again == 0, record.revision > floor else { throw StoreConflict.revisionMismatch(current: again) }
            }
            do {
                if let record = commit.record { try Self.writeRevision(db, record, expected: current) }
                // The answer first: its housekeeping decides which answers stay, and the history's retention
                // gives those that name a row it removes their own copy of its bytes.
                if let answer = commit.answer { try Self.storeAnswer(answer, commit, db: db) }
                if let record = commit.record {
                    try Self.storeHistory(commit, record, db: db)
                    try self.notify(db, .customization(appId: commit.appId, userId: commit.userId))
                }
            } catch let failure as PostgresFailure where failure.isForeignKeyViolation {
                throw StoreConflict.notFound  // the app was deleted meanwhile
            }
        }
    }

    /// Adds the revision's history row and removes the rows past the retention (an answer naming one gets a copy).
    private static func storeHistory(_ commit: CustomizationCommit, _ record: CustomizationRecord, db: PostgresConnection) throws {
        if commit.historyRevisions > 0 {
            // A row under the same revision can only be left from a restored backup: the newer one wins.
            try db.query("""
                INSERT INTO customization_history (app_id, user_id, revision, schema_version, change_kind, operations, document, updated_at,
                    actor, target_revision)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                ON CONFLICT (app_id, user_id, revision) DO UPDATE SET schema_version = excluded.schema_version,
                    change_kind = excluded.change_kind, operations = excluded.operations, document = excluded.document,
                    updated_at = excluded.updated_at, actor = excluded.actor, target_revision = excluded.target_revision
                """, [.text(record.appId), .text(record.userId), .integer(record.revision), .integer(record.schemaVersion),
                      .text(commit.change.rawValue), commit.operations.map { .bytes($0) } ?? .null, .bytes(record.document),
                      .text(record.updatedAt), commit.actor.map { .text($0) } ?? .null, commit.targetRevision.map { .integer($0) } ?? .null])
        }
        // At every write, not only at the housekeeping: rows kept past the retention would come back if the
        // retention were raised (the embedded store keeps a floor instead; a range of the primary key here). An
        // answer that names a row about to go gets that row's bytes as its own copy first (as on the embedded
        // store), so every row past the retention goes, named or not, and a repeat still replays the same bytes.
        let user: [PostgresValue] = [.text(record.appId), .text(record.userId)]
        let cut = PostgresValue.integer(record.revision &- commit.historyRevisions)
        try db.query("""
            UPDATE idempotent_answers AS a SET body = h.document, body_revision = NULL
            FROM customization_history AS h
            WHERE a.app_id = $1 AND a.user_id = $2 AND a.body_revision IS NOT NULL AND a.body_revision <= $3
                AND h.app_id = a.app_id AND h.user_id = a.user_id AND h.revision = a.body_revision
            """, user + [cut])
        try db.query("DELETE FROM customization_history WHERE app_id = $1 AND user_id = $2 AND revision <= $3", user + [cut])
    }

    /// Stores the answer; an expired one under the same key gives way, a live one means another write won.
    /// Each answer takes the next number of its user's insertion order (`insert_order`), the order the cap
    /// evicts in (as the embedded store does). Two replicas storing answers of one user at once may take the
    /// same number when the user has no customization row to lock; such a tie is broken by time, then key.
    private static func storeAnswer(_ answer: IdempotentAnswer, _ commit: CustomizationCommit, db: PostgresConnection) throws {
        let user: [PostgresValue] = [.text(commit.appId), .text(commit.userId)]
        let bodyRevision = StorePolicy.answerBodyRevision(commit)
        let stored = try db.query("""
            INSERT INTO idempotent_answers (app_id, user_id, idempotency_key, request_digest, status, etag, body, body_revision, created_at,
                insert_order)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
                (SELECT COALESCE(max(insert_order), 0) + 1 FROM idempotent_answers WHERE app_id = $1 AND user_id = $2))
            ON CONFLICT (app_id, user_id, idempotency_key) DO UPDATE SET request_digest = excluded.request_digest,
                status = excluded.status, etag = excluded.etag, body = excluded.body, body_revision = excluded.body_revision,
                created_at = excluded.created_at, insert_order = excluded.insert_order
            WHERE idempotent_answers.created_at < $10
            """, user + [.text(answer.key), .bytes(answer.requestDigest), .integer(answer.status), answer.etag.map { .text($0) } ?? .null,
                         bodyRevision == nil ? .bytes(answer.body) : .null, bodyRevision.map { .integer($0) } ?? .null,
                         .integer(answer.createdAt), .integer(commit.answersExpireBefore)]).affected
        if stored == 0 { throw StoreConflict.answerExists }
        guard StorePolicy.housekeeping(commit.record) else { return }
        let kept = try db.query("SELECT count(*) FROM idempotent_answers WHERE app_id = $1 AND user_id = $2", user).scalarInt ?? 0
        if kept > commit.maxAnswersPerUser {
            try db.query("""
                DELETE FROM idempotent_answers WHERE app_id = $1 AND user_id = $2 AND idempotency_key IN (
                    SELECT idempotency_key FROM idempotent_answers WHERE app_id = $1 AND user_id = $2
                    ORDER BY insert_order, created_at, idempotency_key LIMIT $3)
                """, user + [.integer(kept - commit.maxAnswersPerUser)])
        }
        // Bounded cleanup of expired answers (any user's), oldest first through the created_at index.
        try db.query("""
            DELETE FROM idempotent_answers WHERE (app_id, user_id, idempotency_key) IN (
                SELECT app_id, user_id, idempotency_key FROM idempotent_answers WHERE created_at < $1 ORDER BY created_at LIMIT $2)
            """, [.integer(commit.answersExpireBefore), .integer(StorePolicy.expiredAnswersPerHousekeeping)])
    }

    package func revisionFloor(appId: String, userId: String) async throws -> Int {
        try await pool.run { db in
            try db.query("SELECT last_revision FROM revision_floors WHERE app_id = $1 AND user_id = $2", [.text(appId), .text(userId)]).scalarInt ?? 0
        }
    }

    package func idempotentAnswer(appId: String, userId: String, key: String, notBefore: Int) async throws -> IdempotentAnswer? {
        let rows = try await pool.run { db in
            try db.query("""
                SELECT a.request_digest, a.status, a.etag, CASE WHEN a.body_revision IS NULL THEN a.body ELSE h.document END,
                    a.created_at, a.body_revision IS NOT NULL AND h.document IS NULL
                FROM idempotent_answers AS a LEFT JOIN customization_history AS h
                    ON h.app_id = a.app_id AND h.user_id = a.user_id AND h.revision = a.body_revision
                WHERE a.app_id = $1 AND a.user_id = $2 AND a.idempotency_key = $3 AND a.created_at >= $4
                """, [.text(appId), .text(userId), .text(key), .integer(notBefore)])
        }
        guard rows.count > 0 else { return nil }
        if rows.int(0, 5) != 0 {
            // Never replay other bytes than the first answer's: the retention gives an answer a copy before it
            // removes the row the answer names.
            throw StorageError(failure: "the idempotent answer \(key) names a history row that is gone")
        }
        return IdempotentAnswer(key: key, requestDigest: rows.bytes(0, 0), status: rows.int(0, 1),
                                etag: rows.isNull(0, 2) ? nil : rows.text(0, 2), body: rows.bytes(0, 3), createdAt: rows.int(0, 4))
    }

    private static let historyColumns = "revision, schema_version, change_kind, operations, document, updated_at, actor, target_revision"

    private static func historyRows(_ rows: PostgresRows) -> [HistoryRecord] {
        (0..<rows.count).map { row in
            HistoryRecord(revision: rows.int(row, 0), schemaVersion: rows.int(row, 1), change: rows.text(row, 2),
                          operations: rows.isNull(row, 3) ? nil : rows.bytes(row, 3), document: rows.bytes(row, 4), updatedAt: rows.text(row, 5),
                          actor: rows.isNull(row, 6) ? nil : rows.text(row, 6), targetRevision: rows.isNull(row, 7) ? nil : rows.int(row, 7))
        }
    }

    /// Rows above this revision are the last `keep` ($3); older ones wait for the user's next housekeeping.
    private static let keptAbove = "(SELECT max(revision) FROM customization_history WHERE app_id = $1 AND user_id = $2) - $3"

    private static func history(
        _ db: PostgresConnection, appId: String, userId: String, before: Int?, limit: Int, keep: Int
    ) throws -> [HistoryRecord] {
        try historyRows(db.query("""
            SELECT \(historyColumns) FROM customization_history
            WHERE app_id = $1 AND user_id = $2 AND revision < $4 AND revision > \(keptAbove) ORDER BY revision DESC LIMIT $5
            """, [.text(appId), .text(userId), .integer(max(0, keep)), .integer(before ?? Int.max), .integer(max(0, limit))]))
    }

    package func history(appId: String, userId: String, before: Int?, limit: Int, keep: Int, maxBytes: Int) async throws -> [HistoryRecord] {
        // The running total of each row's bytes and of those before it (octet_length reads a stored value's size
        // without fetching it): rows stop after the first past the budget after more than one row, as on SQLite.
        let sql = """
            SELECT \(Self.historyColumns) FROM (
                SELECT \(Self.historyColumns), row_number() OVER newest AS n,
                    sum(octet_length(document) + coalesce(octet_length(operations), 0)) OVER newest
                        - (octet_length(document) + coalesce(octet_length(operations), 0)) AS earlier
                FROM customization_history
                WHERE app_id = $1 AND user_id = $2 AND revision < $4 AND revision > \(Self.keptAbove)
                WINDOW newest AS (ORDER BY revision DESC)
                ORDER BY revision DESC LIMIT $5) AS page
            WHERE n <= 2 OR earlier <= $6 ORDER BY revision DESC
            """
        return try await pool.run { db in
            try Self.historyRows(db.query(sql, [.text(appId), .text(userId), .integer(max(0, keep)), .integer(before ?? Int.max),
                                                .integer(max(0, limit)), .integer(maxBytes)]))
        }
    }

    package func historyRecord(appId: String, userId: String, revision: Int, keep: Int) async throws -> HistoryRecord? {
        let sql = """
            SELECT \(Self.historyColumns) FROM customization_history
            WHERE app_id = $1 AND user_id = $2 AND revision = $4 AND revision > \(Self.keptAbove)
            """
        return try await pool.run { db in
            try Self.historyRows(db.query(sql, [.text(appId), .text(userId), .integer(max(0, keep)), .integer(revision)])).first
        }
    }

    package func userData(userId: String, appId: String?, keep: Int) async throws -> [UserData] {
        // One snapshot for every app's rows.
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { db in
            let apps: [String]
            if let appId {
                apps = [appId]
            } else {
                let rows = try db.query("SELECT id FROM apps ORDER BY id")
                apps = (0..<rows.count).map { rows.text($0, 0) }
            }
            var found: [UserData] = []
            for app in apps {
                let record = try Self.customizationRow(db, appId: app, userId: userId)
                let history = try Self.history(db, appId: app, userId: userId, before: nil, limit: Int.max, keep: keep)
                let rows = try db.query("""
                    SELECT idempotency_key, status, created_at FROM idempotent_answers WHERE app_id = $1 AND user_id = $2
                    ORDER BY insert_order DESC, created_at DESC, idempotency_key
                    """, [.text(app), .text(userId)])
                let answers = (0..<rows.count).map { (key: rows.text($0, 0), status: rows.int($0, 1), createdAt: rows.int($0, 2)) }
                guard record != nil || !history.isEmpty || !answers.isEmpty else { continue }
                found.append(UserData(appId: app, customization: record, history: history, answers: answers))
            }
            return found
        }
    }

    /// Whether the calling task holds its user's write turn (`withWriteTurn`): its commits skip the shared lock
    /// that makes other writes wait for the turn (they would wait for themselves).
    @TaskLocal static var holdsWriteTurn = false

    /// The user's write turn: a session-level advisory lock (another key than `lockUser`'s, which a commit made
    /// inside the turn takes on its own connection), held on a connection of its own while `body` runs, waited
    /// for at most the request's bound. Every commit outside a turn takes the same key shared in its transaction,
    /// so while a replica holds the turn no other write of the user commits: the holder's attempt cannot lose.
    /// The lock goes with the connection if it breaks; a connection whose unlock failed is discarded rather than
    /// pooled with the lock still held.
    package func withWriteTurn<T: Sendable>(appId: String, userId: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let key = PostgresValue.integer(Self.userLockKey(appId: appId, userId: userId, turn: true))
        return try await pool.session { session in
            try await session.run { db in _ = try db.query("SELECT pg_advisory_lock($1)", [key]) }
            let result: Result<T, any Error>
            do { result = .success(try await Self.$holdsWriteTurn.withValue(true) { try await body() }) } catch { result = .failure(error) }
            do {
                try await session.run { db in _ = try db.query("SELECT pg_advisory_unlock($1)", [key]) }
            } catch {
                try? await session.run { db in db.abandon() }
            }
            return try result.get()
        }
    }

    /// Takes the transaction-scoped advisory lock of one user of one app.
    static func lockUser(_ db: PostgresConnection, appId: String, userId: String) throws {
        try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(userLockKey(appId: appId, userId: userId, turn: false))])
    }

    /// A 64-bit FNV-1a hash of both ids' bytes, length-prefixed, and which lock it is for (a collision only makes
    /// two users wait for each other).
    static func userLockKey(appId: String, userId: String, turn: Bool) -> Int {
        var hash: UInt64 = turn ? 0x84222325cbf29ce4 : 0xcbf2_9ce4_8422_2325
        for part in [appId, userId] {
            for byte in withUnsafeBytes(of: UInt32(part.utf8.count).bigEndian, Array.init) + Array(part.utf8) {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return Int(truncatingIfNeeded: hash)
    }

    package func appsHoldingUser(userId: String) async throws -> [String] {
        let rows = try await pool.run { db in
            try db.query("""
                SELECT id FROM apps AS a WHERE
                    EXISTS (SELECT 1 FROM customizations WHERE app_id = a.id AND user_id = $1)
                    OR EXISTS (SELECT 1 FROM customization_history WHERE app_id = a.id AND user_id = $1)
                    OR EXISTS (SELECT 1 FROM idempotent_answers WHERE app_id = a.id AND user_id = $1)
                ORDER BY id
                """, [.text(userId)])
        }
        return (0..<rows.count).map { rows.text($0, 0) }
    }

    package func eraseUser(userId: String, appId: String) async throws -> Bool {
        let user: [PostgresValue] = [.text(appId), .text(userId)]
        return try await transaction { db in
            try Self.lockUser(db, appId: appId, userId: userId)
            let current = try Self.customizationRow(db, appId: appId, userId: userId, lock: true)?.revision ?? 0
            let newest = try db.query("SELECT max(revision) FROM customization_history WHERE app_id = $1 AND user_id = $2", user).scalarInt ?? 0
            let floor = try db.query("SELECT last_revision FROM revision_floors WHERE app_id = $1 AND user_id = $2", user).scalarInt ?? 0
            // Only the counter stays: the next revision is above every one this user ever had here.
            if max(current, newest) > floor {
                try db.query("""
                    INSERT INTO revision_floors (app_id, user_id, last_revision) VALUES ($1, $2, $3)
                    ON CONFLICT (app_id, user_id) DO UPDATE SET last_revision = GREATEST(revision_floors.last_revision, excluded.last_revision)
                    """, user + [.integer(max(current, newest))])
            }
            let customizations = try db.query("DELETE FROM customizations WHERE app_id = $1 AND user_id = $2", user).affected
            let historyRows = try db.query("DELETE FROM customization_history WHERE app_id = $1 AND user_id = $2", user).affected
            let answers = try db.query("DELETE FROM idempotent_answers WHERE app_id = $1 AND user_id = $2", user).affected
            let erased = customizations + historyRows + answers > 0
            if erased { try self.notify(db, .customization(appId: appId, userId: userId)) }
            return erased
        }
    }
}
