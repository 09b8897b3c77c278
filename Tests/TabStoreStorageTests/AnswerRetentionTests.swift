import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

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

    @Test("a database from schema version 6 upgrades: each history becomes a chain from its customization row; one without a row goes, its answers keep their bytes")
    func upgradeFromVersion6() async throws {
        let dir = TemporaryDirectory()
        do {
            let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
            try Migrations.migrate(db, now: "t", upTo: 6)
            try db.run("INSERT INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
            // Two users' rows interleaved, as concurrent writes leave them; "gone" has history but no customization row.
            for revision in 1...3 {
                for user in ["u", "v", "gone"] {
                    try db.run("""
                        INSERT INTO customization_history (app_id, user_id, revision, schema_version, change_kind, operations, document, updated_at)
                        VALUES ('a', ?, ?, 1, 'put', NULL, ?, 't')
                        """, [.text(user), .integer(revision), .blob(Array("{\"\(user)\":\(revision)}".utf8))])
                }
            }
            for user in ["u", "v"] {
                try db.run("""
                    INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES ('a', ?, 3, 1, ?, 't')
                    """, [.text(user), .blob(Array("{\"\(user)\":3}".utf8))])
            }
            for (user, key) in [("u", "k-u"), ("gone", "k-gone")] {
                try db.run("""
                    INSERT INTO idempotent_answers (app_id, user_id, idempotency_key, request_digest, status, etag, body, body_revision, created_at, insert_order)
                    VALUES ('a', ?, ?, X'00', 200, NULL, NULL, 2, 5000, 1)
                    """, [.text(user), .text(key)])
            }
        }
        let store = try Self.open(dir)
        #expect(try await store.history(appId: "a", userId: "u", before: nil, limit: 10, keep: 100).map(\.document)
                == (1...3).reversed().map { Array("{\"u\":\($0)}".utf8) })
        #expect(try await store.history(appId: "a", userId: "v", before: 3, limit: 1, keep: 100).map(\.revision) == [2])
        #expect(try await store.historyRecord(appId: "a", userId: "v", revision: 1, keep: 100)?.document == Array("{\"v\":1}".utf8))
        #expect(try await store.history(appId: "a", userId: "gone", before: nil, limit: 10, keep: 100).isEmpty)
        #expect(try await store.historyCount() == 6)
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k-u", notBefore: 0)?.body == Array("{\"u\":2}".utf8))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "gone", key: "k-gone", notBefore: 0)?.body == Array("{\"gone\":2}".utf8))
        // The next write continues the chain.
        try await store.commitCustomization(CustomizationCommit(
            appId: "a", userId: "u", expectedRevision: 3, record: Self.record("u", revision: 4), change: .put, historyRevisions: 100))
        #expect(try await store.history(appId: "a", userId: "u", before: nil, limit: 10, keep: 100).map(\.revision) == [4, 3, 2, 1])
        #expect(try await store.history(appId: "a", userId: "u", before: nil, limit: 10, keep: 2).map(\.revision) == [4, 3])
        await store.close()
        let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
        #expect(try db.scalarInt("SELECT count(*) FROM customization_history WHERE user_id = 'gone'") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_autoindex_customization_history_1'") == 0)
    }

    @Test("the retention cuts a user's chain: an answer naming a cut row gets its bytes; the rows left are exactly the chain")
    func retentionCutsTheChain() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.open(dir)
        _ = try await store.createApp(id: "a", name: "A", signingSecret: "s", createdAt: "t")
        // Two users writing in turns (their rows interleave), retention 5: each 16th revision trims.
        for revision in 1...40 {
            for user in ["u", "v"] {
                let record = Self.record(user, revision: revision)
                let answer = IdempotentAnswer(
                    key: "k-\(revision)", requestDigest: [1], status: 200, etag: nil, body: record.document, createdAt: 1000)
                try await store.commitCustomization(CustomizationCommit(
                    appId: "a", userId: user, expectedRevision: revision - 1, record: record, change: .put, historyRevisions: 5,
                    answer: user == "u" ? answer : nil, answersExpireBefore: 0))
            }
        }
        // Trimmed at 32 to revisions 28...32, then 33...40 added: 13 rows each, 5 listed.
        #expect(try await store.historyCount() == 26)
        #expect(try await store.history(appId: "a", userId: "u", before: nil, limit: 100, keep: 5).map(\.revision) == Array((36...40).reversed()))
        #expect(try await store.historyRecord(appId: "a", userId: "v", revision: 35, keep: 5) == nil)
        // Every answer replays its own revision's bytes, whether its row is in the chain or was cut.
        for revision in [1, 27, 28, 40] {
            #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k-\(revision)", notBefore: 0)?.body
                    == Self.record("u", revision: revision).document)
        }
        #expect(try await store.eraseUser(userId: "u", appId: "a"))
        #expect(try await store.historyCount() == 13)
        await store.close()
        let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
        #expect(try db.scalarInt("SELECT count(*) FROM customization_history") == 13)
        #expect(try db.scalarInt("SELECT count(*) FROM customization_history WHERE user_id = 'v' AND revision BETWEEN 28 AND 40") == 13)
        #expect(try db.scalarInt("SELECT count(*) FROM idempotent_answers WHERE body_revision IS NOT NULL AND body_revision < 28") == 0)
    }

    @Test("insertion numbers are reserved a block at a time: stored until a batch that stored them commits; a restart goes on above the block")
    func insertionOrderBlocks() async throws {
        let dir = TemporaryDirectory()
        let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
        try Migrations.migrate(db, now: "t")
        let counter = { try db.scalarInt("SELECT value FROM tabstore_counters WHERE name = 'answer_order'") }
        let bookkeeping = AnswerBookkeeping()
        #expect(try bookkeeping.nextOrder(db) == 1)
        try bookkeeping.storeOrder(db)
        #expect(try counter() == AnswerBookkeeping.orderBlock)
        // That batch failed (its UPDATE rolled back): the next one stores the block again.
        try db.run("UPDATE tabstore_counters SET value = 0 WHERE name = 'answer_order'")
        #expect(try bookkeeping.nextOrder(db) == 2)
        try bookkeeping.storeOrder(db)
        #expect(try counter() == AnswerBookkeeping.orderBlock)
        // Once one committed, the numbers left in the block cost no write.
        bookkeeping.batchCommitted()
        try db.run("UPDATE tabstore_counters SET value = 7 WHERE name = 'answer_order'")
        #expect(try bookkeeping.nextOrder(db) == 3)
        try bookkeeping.storeOrder(db)
        #expect(try counter() == 7)
        // A new writer (a restart) starts above the stored value.
        try db.run("UPDATE tabstore_counters SET value = ? WHERE name = 'answer_order'", [.integer(AnswerBookkeeping.orderBlock)])
        let restarted = AnswerBookkeeping()
        #expect(try restarted.nextOrder(db) == AnswerBookkeeping.orderBlock + 1)
        try restarted.storeOrder(db)
        #expect(try counter() == 2 * AnswerBookkeeping.orderBlock)
    }

    @Test("deleting an app removes its users' history chains (no cascade), and only theirs: a restart counts what is left")
    func deleteAppRemovesChains() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.open(dir)
        for app in ["a", "b"] {
            _ = try await store.createApp(id: app, name: app, signingSecret: "s", createdAt: "t")
            for user in ["u", "v"] {
                for revision in 1...3 {
                    try await store.commitCustomization(CustomizationCommit(
                        appId: app, userId: user, expectedRevision: revision - 1,
                        record: CustomizationRecord(appId: app, userId: user, revision: revision, schemaVersion: 1,
                                                    document: Array("{\"\(app)\(user)\":\(revision)}".utf8), updatedAt: "t"),
                        change: .put, historyRevisions: 100))
                }
            }
        }
        #expect(try await store.historyCount() == 12)
        #expect(try await store.deleteApp("b"))
        #expect(try await store.historyCount() == 6)
        await store.close()
        let reopened = try Self.open(dir)
        #expect(try await reopened.historyCount() == 6)
        #expect(try await reopened.history(appId: "a", userId: "v", before: nil, limit: 10, keep: 100).map(\.revision) == [3, 2, 1])
        _ = try await reopened.createApp(id: "b", name: "b", signingSecret: "s", createdAt: "t")
        #expect(try await reopened.history(appId: "b", userId: "u", before: nil, limit: 10, keep: 100).isEmpty)
        await reopened.close()
    }

    @Test("a revision the retention cut never comes back when it is raised; a lower retention (or 0) applies at the user's next write")
    func retentionFloor() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.open(dir)
        _ = try await store.createApp(id: "a", name: "A", signingSecret: "s", createdAt: "t")
        func write(_ user: String, _ revision: Int, keep: Int) async throws {
            try await store.commitCustomization(CustomizationCommit(
                appId: "a", userId: user, expectedRevision: revision - 1, record: Self.record(user, revision: revision), change: .put,
                historyRevisions: keep))
        }
        func listed(_ user: String, keep: Int = 100) async throws -> [Int] {
            try await store.history(appId: "a", userId: user, before: nil, limit: 100, keep: keep).map(\.revision)
        }
        // Retention 3 throughout: rows past it wait for the housekeeping, but raising the retention shows none of them.
        for revision in 1...31 { try await write("same", revision, keep: 3) }
        #expect(try await listed("same", keep: 3) == [31, 30, 29])
        #expect(try await listed("same") == [31, 30, 29])
        #expect(try await store.historyRecord(appId: "a", userId: "same", revision: 20, keep: 100) == nil)
        // Lowered from 100 to 3: at the next write only 3 rows are left.
        for revision in 1...40 { try await write("lowered", revision, keep: 100) }
        let before = try await store.historyCount()
        try await write("lowered", 41, keep: 3)
        #expect(try await store.historyCount() == before - 37)
        #expect(try await listed("lowered") == [41, 40, 39])
        // 0 keeps none from the next write on; raised again, history starts after it, without a gap.
        for revision in 1...20 { try await write("zero", revision, keep: 100) }
        try await write("zero", 21, keep: 0)
        #expect(try await listed("zero").isEmpty)
        try await write("zero", 22, keep: 100)
        #expect(try await listed("zero") == [22])
        #expect(try await store.historyRecord(appId: "a", userId: "zero", revision: 5, keep: 100) == nil)
        await store.close()
    }
}
