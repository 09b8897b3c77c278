import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreSupport

/// How long idempotent answers are kept on the embedded store: the per-user cap (strictly oldest-inserted
/// first, migration 5), the 24-hour expiry in bounded steps, and a database from before migration 5.
@Suite("Idempotent answer retention")
struct AnswerRetentionTests {
    static func answer(_ key: String, createdAt: Int) -> IdempotentAnswer {
        IdempotentAnswer(key: key, requestDigest: Array(key.utf8), status: 200, etag: nil, body: Array("{}".utf8), createdAt: createdAt)
    }

    static func record(_ userId: String, revision: Int) -> CustomizationRecord {
        CustomizationRecord(appId: "a", userId: userId, revision: revision, schemaVersion: 1,
                            document: Array("{\"revision\":\(revision)}".utf8), updatedAt: "t")
    }

    static func open(_ dir: TemporaryDirectory) throws -> SQLiteStore {
        try SQLiteStore(configuration: SQLiteStore.Configuration(path: dir.file("tabstore.sqlite")))
    }

    /// The user's keys, newest first (as the export lists them).
    static func keys(_ store: SQLiteStore, _ userId: String) async throws -> [String] {
        try await store.userData(userId: userId, appId: "a", keep: 100).first?.answers.map(\.key) ?? []
    }

    @Test("a database from schema version 4 upgrades: its answers still replay, and go before every newer one past the cap")
    func upgradeFromVersion4() async throws {
        let dir = TemporaryDirectory()
        do {
            let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
            try Migrations.migrate(db, now: "t", upTo: 4)
            #expect(try db.scalarInt("SELECT max(version) FROM tabstore_migrations") == 4)
            try db.run("INSERT INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
            // Written in the old layout (no insertion order), at a later second than the new answers below will be.
            for key in ["c-old", "a-old", "b-old"] {
                try db.run("""
                    INSERT INTO idempotent_answers (app_id, user_id, idempotency_key, request_digest, status, etag, body, created_at)
                    VALUES ('a', 'u', ?, ?, 200, NULL, ?, 5000)
                    """, [.text(key), .blob(Array(key.utf8)), .blob(Array("{\"old\":true}".utf8))])
            }
        }
        let store = try Self.open(dir)
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "a-old", notBefore: 0)?.body == Array("{\"old\":true}".utf8))
        // 16 keyed revisions (the 16th does the housekeeping), created "earlier" than the old ones (a clock set
        // back): insertion order, not time, decides. Cap 17 of 19: the two old answers first in (time, key) go.
        for revision in 1...16 {
            try await store.commitCustomization(CustomizationCommit(
                appId: "a", userId: "u", expectedRevision: revision - 1, record: Self.record("u", revision: revision), change: .put,
                historyRevisions: 100, answer: Self.answer("new-\(revision)", createdAt: 1000), maxAnswersPerUser: 17))
        }
        #expect(try await Self.keys(store, "u") == (1...16).reversed().map { "new-\($0)" } + ["c-old"])
        await store.close()
        let reopened = try Self.open(dir)
        #expect(try await Self.keys(reopened, "u").count == 17)
        let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
        #expect(try db.scalarInt("SELECT max(version) FROM tabstore_migrations") == Migrations.latestVersion)
        #expect(try db.scalarInt("SELECT insert_order FROM idempotent_answers WHERE idempotency_key = 'c-old'") == 0)
        #expect(try db.scalarInt("SELECT insert_order FROM idempotent_answers WHERE idempotency_key = 'new-16'") == 16)
        await reopened.close()
    }

    @Test("expired answers of users who never write again go in bounded steps of 64 answers looked at, live ones stay")
    func expiryInBoundedSteps() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.open(dir)
        try await store.executeOnWriter("INSERT INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
        // Keyed writes that change nothing store only their answer (and do the housekeeping every time).
        let commit = { (userId: String, key: String, createdAt: Int, expireBefore: Int) in
            CustomizationCommit(appId: "a", userId: userId, expectedRevision: 0, record: nil, change: .patch, historyRevisions: 100,
                                answer: Self.answer(key, createdAt: createdAt), answersExpireBefore: expireBefore)
        }
        // "old" never writes again: 150 expired answers, and 5 that are still live among them in key order.
        for index in 0..<150 { try await store.commitCustomization(commit("old", "k-\(index)", 100 + index, 0)) }
        for index in 0..<5 { try await store.commitCustomization(commit("old", "k-\(index)-live", 200_000, 0)) }
        let live = (0..<5).map { "k-\($0)-live" }
        // Each step looks at the next 64 answers in key order: the first also at "new"'s own answer.
        var left = 155
        for step in 0..<4 {
            try await store.commitCustomization(commit("new", "n-\(step)", 200_000, 100_000))
            let keys = try await Self.keys(store, "old")
            #expect(keys.count < left || left == 5)
            #expect(keys.count >= 5 && keys.count >= left - 64)
            left = keys.count
        }
        #expect(Set(try await Self.keys(store, "old")) == Set(live))
        #expect(try await Self.keys(store, "new").count == 4)
        await store.close()
    }

    @Test("a user's own expired answers go at their housekeeping, wherever the sweep of everyone's is")
    func ownExpiredAnswersGoAtHousekeeping() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.open(dir)
        try await store.executeOnWriter("INSERT INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
        for index in 0..<100 {
            try await store.commitCustomization(CustomizationCommit(
                appId: "a", userId: "zz-last", expectedRevision: 0, record: nil, change: .patch, historyRevisions: 100,
                answer: Self.answer("k-\(index)", createdAt: 100), answersExpireBefore: 0))
        }
        // One keyed write that changes nothing (housekeeping) a day later: the 100 expired ones go at once,
        // though the sweep of everyone's looks at 64 answers a step.
        try await store.commitCustomization(CustomizationCommit(
            appId: "a", userId: "zz-last", expectedRevision: 0, record: nil, change: .patch, historyRevisions: 100,
            answer: Self.answer("today", createdAt: 200_000), answersExpireBefore: 100_000))
        #expect(try await Self.keys(store, "zz-last") == ["today"])
        await store.close()
    }

    @Test("a database from schema version 5 upgrades: history rows, their order and the answers naming them stay")
    func upgradeFromVersion5() async throws {
        let dir = TemporaryDirectory()
        do {
            let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
            try Migrations.migrate(db, now: "t", upTo: 5)
            try db.run("INSERT INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
            for revision in 1...3 {
                try db.run("""
                    INSERT INTO customization_history (app_id, user_id, revision, schema_version, change_kind, operations, document, updated_at)
                    VALUES ('a', 'u', ?, 1, 'put', NULL, ?, 't')
                    """, [.integer(revision), .blob(Array("{\"revision\":\(revision)}".utf8))])
            }
            try db.run("""
                INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at)
                VALUES ('a', 'u', 3, 1, ?, 't')
                """, [.blob(Array("{\"revision\":3}".utf8))])
            try db.run("""
                INSERT INTO idempotent_answers (app_id, user_id, idempotency_key, request_digest, status, etag, body, body_revision, created_at, insert_order)
                VALUES ('a', 'u', 'k-2', X'00', 200, NULL, NULL, 2, 5000, 7)
                """)
        }
        let store = try Self.open(dir)
        #expect(try await store.history(appId: "a", userId: "u", before: nil, limit: 10, keep: 100).map(\.revision) == [3, 2, 1])
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k-2", notBefore: 0)?.body == Array("{\"revision\":2}".utf8))
        // The insertion order goes on after the largest number given before the upgrade.
        try await store.commitCustomization(CustomizationCommit(
            appId: "a", userId: "u", expectedRevision: 3, record: Self.record("u", revision: 4), change: .put,
            historyRevisions: 100, answer: Self.answer("k-4", createdAt: 6000)))
        await store.close()
        let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
        #expect(try db.scalarInt("SELECT insert_order FROM idempotent_answers WHERE idempotency_key = 'k-4'") == 8)
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'idempotent_answers_by_%'") == 0)
    }
}
