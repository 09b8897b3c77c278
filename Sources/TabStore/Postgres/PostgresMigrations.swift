import TabStoreStore
import TabStoreSupport

/// The PostgreSQL schema as numbered, named steps (the contract's `Migration`, run by `MigrationRunner` as the
/// SQLite one is) but with its own numbering: version 1
/// is the SQLite schema as of its migration 4. Ids are `TEXT COLLATE "C"`, so they compare and sort by their
/// UTF-8 bytes (never by a locale); documents are `BYTEA`, stored and returned byte for byte.
///
/// Replicas may start at once: the whole run holds a session advisory lock, so one migrates and the others
/// wait and then find nothing left to do. Each migration commits together with its bookkeeping row.
package enum PostgresMigrations {
    package static let all: [Migration] = [
        Migration(version: 1, name: "apps, schema versions, customizations, history, idempotent answers, revision floors", sql: """
            CREATE TABLE apps (
                id TEXT COLLATE "C" PRIMARY KEY,
                name TEXT NOT NULL,
                signing_secret TEXT NOT NULL,
                created_at TEXT NOT NULL,
                schema_version BIGINT NOT NULL DEFAULT 0,
                schema_version_floor BIGINT NOT NULL DEFAULT 0
            );
            CREATE TABLE retired_apps (
                id TEXT COLLATE "C" PRIMARY KEY,
                last_schema_version BIGINT NOT NULL
            );
            CREATE TABLE schema_versions (
                app_id TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                version BIGINT NOT NULL,
                document BYTEA NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (app_id, version)
            );
            CREATE TABLE customizations (
                app_id TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                user_id TEXT COLLATE "C" NOT NULL,
                revision BIGINT NOT NULL,
                schema_version BIGINT NOT NULL,
                document BYTEA NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (app_id, user_id)
            );
            CREATE TABLE customization_history (
                app_id TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                user_id TEXT COLLATE "C" NOT NULL,
                revision BIGINT NOT NULL,
                schema_version BIGINT NOT NULL,
                change_kind TEXT NOT NULL,
                operations BYTEA,
                document BYTEA NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (app_id, user_id, revision)
            );
            CREATE TABLE idempotent_answers (
                app_id TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                user_id TEXT COLLATE "C" NOT NULL,
                idempotency_key TEXT COLLATE "C" NOT NULL,
                request_digest BYTEA NOT NULL,
                status BIGINT NOT NULL,
                etag TEXT,
                body BYTEA,
                body_revision BIGINT,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, user_id, idempotency_key)
            );
            CREATE INDEX idempotent_answers_by_age ON idempotent_answers (created_at);
            CREATE TABLE revision_floors (
                app_id TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                user_id TEXT COLLATE "C" NOT NULL,
                last_revision BIGINT NOT NULL,
                PRIMARY KEY (app_id, user_id)
            );
            """),
        // SQLite's migration 5: answers past the per-user cap go strictly in insertion order.
        Migration(version: 2, name: "idempotent answers evicted in insertion order", sql: """
            ALTER TABLE idempotent_answers ADD COLUMN insert_order BIGINT NOT NULL DEFAULT 0;
            CREATE INDEX idempotent_answers_by_insertion ON idempotent_answers (app_id, user_id, insert_order);
            """),
        // Several app versions at once (docs/domain.md "Several app versions at once"), as SQLite's migration 9.
        Migration(version: 3, name: "minimum schema version of an app", sql: """
            ALTER TABLE apps ADD COLUMN minimum_schema_version BIGINT NOT NULL DEFAULT 1;
            ALTER TABLE apps ADD COLUMN minimum_applied BIGINT NOT NULL DEFAULT 1;
            """),
        // History rows name their actor and a revert's target, as SQLite's migration 10 (old rows: NULL).
        Migration(version: 4, name: "history rows name their actor and a revert's target", sql: """
            ALTER TABLE customization_history ADD COLUMN actor TEXT;
            ALTER TABLE customization_history ADD COLUMN target_revision BIGINT;
            """),
        // Named operator tokens, as SQLite's migration 11: only SHA-256 digests are stored.
        Migration(version: 5, name: "named operator tokens", sql: """
            CREATE TABLE operator_tokens (
                name TEXT COLLATE "C" PRIMARY KEY,
                digest BYTEA NOT NULL UNIQUE,
                scope TEXT NOT NULL,
                created_at TEXT NOT NULL,
                expires_at BIGINT
            );
            """),
        // The audit log, as SQLite's migration 12.
        Migration(version: 6, name: "audit log", sql: """
            CREATE TABLE audit_log (
                seq BIGSERIAL PRIMARY KEY,
                at TEXT NOT NULL, actor TEXT COLLATE "C" NOT NULL, action TEXT NOT NULL, app_id TEXT COLLATE "C", user_id TEXT COLLATE "C",
                target TEXT, request_id TEXT NOT NULL, status BIGINT NOT NULL
            );
            CREATE INDEX audit_log_by_app ON audit_log (app_id, seq);
            CREATE INDEX audit_log_by_actor ON audit_log (actor, seq);
            """),
    ]

    package static var latestVersion: Int { all.last?.version ?? 0 }

    /// The advisory lock's key: "tabstore" in ASCII as a 64-bit number, so other users of advisory locks in
    /// the same database are unlikely to collide with it.
    static let lockKey: Int = Array("tabstore".utf8).reduce(0) { $0 << 8 | Int($1) }

    /// Brings the database up to `latestVersion` under the advisory lock; running it again changes nothing.
    /// - Throws: `ConfigurationError` when the database is newer than this build, `PostgresFailure`.
    package static func migrate(_ db: PostgresConnection, now: String) throws {
        try db.query("SELECT pg_advisory_lock($1)", [.integer(lockKey)])
        defer { _ = try? db.query("SELECT pg_advisory_unlock($1)", [.integer(lockKey)]) }
        do {
            try MigrationRunner.migrate(all, on: Target(db: db), now: now)
        } catch let newer as MigrationRunner.NewerDatabase {
            throw ConfigurationError(description: "the PostgreSQL database is at schema version \(newer.current), newer than this tab-server understands (\(newer.latest)); upgrade tab-server or restore a backup")
        }
    }

    /// The database, as the runner migrates it (under the advisory lock, so no other replica migrates meanwhile).
    private struct Target: MigrationTarget {
        let db: PostgresConnection

        func prepareBookkeeping() throws {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS tabstore_migrations (
                    version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)
                """)
        }

        func appliedVersion() throws -> Int { try db.query("SELECT max(version) FROM tabstore_migrations").scalarInt ?? 0 }

        func apply(_ migration: Migration, appliedAt: String) throws {
            try db.execute("BEGIN")
            do {
                try db.execute(migration.sql)
                try db.query("INSERT INTO tabstore_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                             [.integer(migration.version), .text(migration.name), .text(appliedAt)])
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
        }
    }
}
