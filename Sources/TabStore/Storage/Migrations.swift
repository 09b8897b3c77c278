import TabStoreStore
import CSQLite
/// The SQLite schema as numbered, named steps (the contract's `Migration`), run by `MigrationRunner`: each in one
/// `BEGIN IMMEDIATE` transaction together with its bookkeeping row, so a crash leaves either all of it or none of it.
package enum Migrations {
    package static let all: [Migration] = [
        Migration(version: 1, name: "apps, schema versions, customizations", sql: """
            CREATE TABLE apps (
                id TEXT PRIMARY KEY NOT NULL,
                name TEXT NOT NULL,
                signing_secret TEXT NOT NULL,
                created_at TEXT NOT NULL,
                schema_version INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID;
            CREATE TABLE schema_versions (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                version INTEGER NOT NULL,
                document TEXT NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (app_id, version)
            ) WITHOUT ROWID;
            CREATE TABLE customizations (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                schema_version INTEGER NOT NULL,
                document BLOB NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (app_id, user_id)
            ) WITHOUT ROWID;
            """),
        // Schema versions are never reused for an app id, even after the app is deleted and created again:
        // every ETag and cached `/schema/versions/{n}` names its version number, so a reused number would name
        // two contents. A deleted app leaves its id and last version here; a new app with that id starts after it.
        Migration(version: 2, name: "schema versions never reused for an app id", sql: """
            CREATE TABLE retired_apps (
                id TEXT PRIMARY KEY NOT NULL,
                last_schema_version INTEGER NOT NULL
            ) WITHOUT ROWID;
            ALTER TABLE apps ADD COLUMN schema_version_floor INTEGER NOT NULL DEFAULT 0;
            """),
        // Issue 15: every revision kept (up to a retention) with what made it; the first answer to each write
        // sent with an Idempotency-Key; and, after a user's data is erased, the last revision they had, so the
        // next write continues above it and no ETag ever names two contents. History starts with the first
        // write after this migration (what made earlier revisions is not known).
        Migration(version: 3, name: "history, idempotent answers, revision floors", sql: """
            CREATE TABLE customization_history (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                schema_version INTEGER NOT NULL,
                change_kind TEXT NOT NULL,
                operations BLOB,
                document BLOB NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (app_id, user_id, revision)
            ) WITHOUT ROWID;
            CREATE TABLE idempotent_answers (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                request_digest BLOB NOT NULL,
                status INTEGER NOT NULL,
                etag TEXT,
                body BLOB,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (app_id, user_id, idempotency_key)
            ) WITHOUT ROWID;
            CREATE INDEX idempotent_answers_by_age ON idempotent_answers (created_at);
            CREATE TABLE revision_floors (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                last_revision INTEGER NOT NULL,
                PRIMARY KEY (app_id, user_id)
            ) WITHOUT ROWID;
            """),
        // An answer whose body is the document its write stored as a history row keeps the revision instead of a
        // second copy (`body` NULL then): the history row stays while an answer names it (SQLiteStore+History).
        Migration(version: 4, name: "idempotent answers name their history row instead of copying the document", sql: """
            ALTER TABLE idempotent_answers ADD COLUMN body_revision INTEGER;
            """),
        // Past the per-user cap the answers stored first go first. `created_at` (seconds) cannot say which of a
        // burst came first, and the key's text says nothing about it: each answer gets the next number of its
        // user's insertion order. Answers stored before this migration keep 0 and go before every newer one,
        // among themselves by (created_at, key) as before (they expire within 24 hours anyway).
        Migration(version: 5, name: "idempotent answers evicted in insertion order", sql: """
            ALTER TABLE idempotent_answers ADD COLUMN insert_order INTEGER NOT NULL DEFAULT 0;
            CREATE INDEX idempotent_answers_by_insertion ON idempotent_answers (app_id, user_id, insert_order);
            """),
        // What a keyed PATCH writes, in pages: the history kept each document inside its (app, user, revision)
        // key, so a row was a quarter of a page or more and every write split the user's last page (or spilled
        // to an overflow page); each answer was written three times (its row, the index by age and the index by
        // insertion). Each page a commit dirties is written to the WAL and copied again by the checkpoint.
        // Now the history is a rowid table, so the documents of a batch go to the same last pages, and only a
        // small (app, user, revision) index entry goes in the user's place; answers keep one B-tree, clustered
        // by user. Insertion order comes from one counter (`answer_order`, the largest number given so far), on
        // a page every write of a batch shares; expiry works through each user's answers at their housekeeping
        // and through everyone's in bounded steps (SQLiteStore+History).
        Migration(version: 6, name: "history in insertion order, answers in one B-tree", sql: """
            CREATE TABLE customization_history_v6 (
                app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                schema_version INTEGER NOT NULL,
                change_kind TEXT NOT NULL,
                operations BLOB,
                document BLOB NOT NULL,
                updated_at TEXT NOT NULL,
                UNIQUE (app_id, user_id, revision)
            );
            INSERT INTO customization_history_v6 (app_id, user_id, revision, schema_version, change_kind, operations, document, updated_at)
                SELECT app_id, user_id, revision, schema_version, change_kind, operations, document, updated_at
                FROM customization_history ORDER BY app_id, user_id, revision;
            DROP TABLE customization_history;
            ALTER TABLE customization_history_v6 RENAME TO customization_history;
            DROP INDEX idempotent_answers_by_age;
            DROP INDEX idempotent_answers_by_insertion;
            CREATE TABLE tabstore_counters (
                name TEXT PRIMARY KEY NOT NULL,
                value INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO tabstore_counters (name, value) SELECT 'answer_order', coalesce(max(insert_order), 0) FROM idempotent_answers;
            """),
        // The history's (app, user, revision) index put one entry of every write in the user's own place in a
        // B-tree of every user: a scattered page per write, written to the WAL and copied by the checkpoint
        // (about a quarter of what a keyed PATCH wrote). Now a user's history is a chain: the customization row
        // names its newest history row (`history_head`) and each row the one before it (`previous`), so a write
        // touches only the customization row it rewrites anyway and the last page of the history. What reads or
        // removes a history walks the chain from its head (at most the retention plus `housekeepingEvery` rows to
        // read), deleting an app too: no index by app, and no foreign key, whose cascade would scan the table
        // without one (a write for an app deleted meanwhile still fails on the customization row's key). A row an
        // idempotent answer names stays in the chain until the retention passes it; then the answer gets its own
        // copy of the bytes (SQLiteStore+History). A history without a customization row could not be reached:
        // its answers get their copies and it goes. `history_floor`: the highest revision the retention ever cut
        // for the user (rows at or below it are never listed again, even after the retention is raised).
        Migration(version: 7, name: "history as a chain from the customization row", sql: """
            UPDATE idempotent_answers SET
                body = (SELECT h.document FROM customization_history AS h WHERE h.app_id = idempotent_answers.app_id
                        AND h.user_id = idempotent_answers.user_id AND h.revision = idempotent_answers.body_revision),
                body_revision = NULL
            WHERE body_revision IS NOT NULL AND NOT EXISTS (SELECT 1 FROM customizations AS c
                WHERE c.app_id = idempotent_answers.app_id AND c.user_id = idempotent_answers.user_id);
            CREATE TABLE customization_history_v7 (
                app_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                previous INTEGER,
                schema_version INTEGER NOT NULL,
                change_kind TEXT NOT NULL,
                operations BLOB,
                document BLOB NOT NULL,
                updated_at TEXT NOT NULL
            );
            INSERT INTO customization_history_v7 (rowid, app_id, user_id, revision, previous, schema_version, change_kind, operations, document, updated_at)
                SELECT h.rowid, h.app_id, h.user_id, h.revision,
                    (SELECT p.rowid FROM customization_history AS p WHERE p.app_id = h.app_id AND p.user_id = h.user_id
                        AND p.revision < h.revision ORDER BY p.revision DESC LIMIT 1),
                    h.schema_version, h.change_kind, h.operations, h.document, h.updated_at
                FROM customization_history AS h
                WHERE EXISTS (SELECT 1 FROM customizations AS c WHERE c.app_id = h.app_id AND c.user_id = h.user_id);
            ALTER TABLE customizations ADD COLUMN history_head INTEGER;
            ALTER TABLE customizations ADD COLUMN history_floor INTEGER NOT NULL DEFAULT 0;
            UPDATE customizations SET history_head = (SELECT h.rowid FROM customization_history AS h
                WHERE h.app_id = customizations.app_id AND h.user_id = customizations.user_id ORDER BY h.revision DESC LIMIT 1);
            DROP TABLE customization_history;
            ALTER TABLE customization_history_v7 RENAME TO customization_history;
            """),
        // Each answer in `idempotent_answers` (clustered by user) dirtied a page of its own per keyed write. A keyed
        // write that makes a revision now keeps its answer in the history row it appends anyway (`answer_*`: the
        // key, the request's digest, status, ETag, whether the body is the row's document or empty, when, and its
        // number in the insertion order), and the customization row lists those answers (`history_answers`, see
        // HistoryAnswers): a new key is known new without reading a history row. The retention moves a live
        // answer to `idempotent_answers` before it cuts its row. Existing rows hold none. The table is rebuilt
        // (rowids kept: the chains link by them) so that what a walk of the chain reads (revision, previous, the
        // answer's key and time) comes before the documents, which may spill to overflow pages.
        Migration(version: 8, name: "idempotent answers kept in the history rows their writes append", sql: """
            CREATE TABLE customization_history_v8 (
                app_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                previous INTEGER,
                answer_key TEXT,
                answer_created INTEGER,
                schema_version INTEGER NOT NULL,
                change_kind TEXT NOT NULL,
                answer_digest BLOB,
                answer_status INTEGER,
                answer_etag TEXT,
                answer_with_document INTEGER,
                answer_order INTEGER,
                operations BLOB,
                document BLOB NOT NULL,
                updated_at TEXT NOT NULL
            );
            INSERT INTO customization_history_v8 (rowid, app_id, user_id, revision, previous, schema_version, change_kind, operations,
                document, updated_at)
                SELECT rowid, app_id, user_id, revision, previous, schema_version, change_kind, operations, document, updated_at
                FROM customization_history;
            DROP TABLE customization_history;
            ALTER TABLE customization_history_v8 RENAME TO customization_history;
            ALTER TABLE customizations ADD COLUMN history_answers BLOB;
            """),
        // Several app versions at once (docs/domain.md "Several app versions at once"): the oldest version still served, and the highest minimum
        // under which a write dropped choices (the minimum never goes below it).
        Migration(version: 9, name: "minimum schema version of an app", sql: """
            ALTER TABLE apps ADD COLUMN minimum_schema_version INTEGER NOT NULL DEFAULT 1;
            ALTER TABLE apps ADD COLUMN minimum_applied INTEGER NOT NULL DEFAULT 1;
            """),
        // History that explains (docs/api.md "History entries"): who made each revision and a revert's target.
        // Rows stored before hold NULL: they read as the user's own writes, without a target (documented).
        Migration(version: 10, name: "history rows name their actor and a revert's target", sql: """
            ALTER TABLE customization_history ADD COLUMN actor TEXT;
            ALTER TABLE customization_history ADD COLUMN target_revision INTEGER;
            """),
        // Named operator tokens (docs/api.md "Operator tokens and audit"): only SHA-256 digests are stored.
        Migration(version: 11, name: "named operator tokens", sql: """
            CREATE TABLE operator_tokens (
                name TEXT PRIMARY KEY NOT NULL,
                digest BLOB NOT NULL UNIQUE,
                scope TEXT NOT NULL,
                created_at TEXT NOT NULL,
                expires_at INTEGER
            ) WITHOUT ROWID;
            """),
        // The audit log (docs/api.md "Operator tokens and audit"), its growth bounded by `--audit-retention`.
        Migration(version: 12, name: "audit log", sql: """
            CREATE TABLE audit_log (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, app_id TEXT, user_id TEXT, target TEXT,
                request_id TEXT NOT NULL, status INTEGER NOT NULL
            );
            CREATE INDEX audit_log_by_app ON audit_log (app_id, seq);
            CREATE INDEX audit_log_by_actor ON audit_log (actor, seq);
            """),
    ]

    package static var latestVersion: Int { all.last?.version ?? 0 }

    /// Brings the database up to `target` (`latestVersion`; an older one only to build old databases in tests);
    /// running it again changes nothing.
    /// - Throws: `StorageError` when a migration fails or the database is newer than this build.
    package static func migrate(_ db: SQLiteConnection, now: String, upTo target: Int = latestVersion) throws {
        do {
            try MigrationRunner.migrate(all, on: Target(db: db), now: now, upTo: target)
        } catch let newer as MigrationRunner.NewerDatabase {
            throw StorageError(
                extendedCode: SQLITE_ERROR,
                message:
                    "the database at \(db.path) is at schema version \(newer.current), newer than this tab-server understands (\(newer.latest)); upgrade tab-server or restore a backup"
            )
        }
    }

    /// The database file, as the runner migrates it.
    private struct Target: MigrationTarget {
        let db: SQLiteConnection

        func prepareBookkeeping() throws {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS tabstore_migrations (
                    version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL)
                """)
        }

        func appliedVersion() throws -> Int { try db.scalarInt("SELECT max(version) FROM tabstore_migrations") ?? 0 }

        func apply(_ migration: Migration, appliedAt: String) throws {
            try db.transaction {
                // Re-checked inside the write lock: another process may have migrated meanwhile.
                let applied = try db.scalarInt("SELECT 1 FROM tabstore_migrations WHERE version = ?", [.integer(migration.version)])
                guard applied == nil else { return }
                try db.execute(migration.sql)
                try db.run("INSERT INTO tabstore_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                           [.integer(migration.version), .text(migration.name), .text(appliedAt)])
            }
        }
    }
}
