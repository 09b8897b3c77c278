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

    @Test("expired answers (any user's) go at most 64 per housekeeping, oldest first, until none is left")
    func expiryInBoundedSteps() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.open(dir)
        try await store.executeOnWriter("INSERT INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
        // Keyed writes that change nothing store only their answer (and do the housekeeping every time).
        let commit = { (userId: String, key: String, createdAt: Int, expireBefore: Int) in
            CustomizationCommit(appId: "a", userId: userId, expectedRevision: 0, record: nil, change: .patch, historyRevisions: 100,
                                answer: Self.answer(key, createdAt: createdAt), answersExpireBefore: expireBefore)
        }
        for index in 0..<150 { try await store.commitCustomization(commit("old", "k-\(index)", 100 + index, 0)) }
        let remaining = [86, 22, 0]
        for (step, left) in remaining.enumerated() {
            try await store.commitCustomization(commit("new", "n-\(step)", 200_000, 100_000))
            let keys = try await Self.keys(store, "old")
            #expect(keys.count == left)
            // The newest survive: what goes is the oldest.
            #expect(keys == (150 - left..<150).reversed().map { "k-\($0)" })
        }
        #expect(try await Self.keys(store, "new").count == 3)
        await store.close()
    }
}
