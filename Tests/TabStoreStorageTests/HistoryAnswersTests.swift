import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Idempotent answers kept in the history rows their writes append (migration 8): found again by their key's
/// bytes (a hash in the customization row only filters), moved to `idempotent_answers` when the retention cuts
/// their row, bounded per user, exported and erased like the others.
@Suite("Idempotent answers in history rows")
struct HistoryAnswersTests {
    static func record(_ revision: Int, user: String = "u") -> CustomizationRecord {
        CustomizationRecord(appId: "a", userId: user, revision: revision, schemaVersion: 1,
                            document: Array("{\"revision\":\(revision)}".utf8), updatedAt: "t\(revision)")
    }

    /// The answer a write of `record` gives: its document (or, for a DELETE, no body), digest from the key.
    static func answer(_ key: String, for record: CustomizationRecord, createdAt: Int = 1000, empty: Bool = false) -> IdempotentAnswer {
        IdempotentAnswer(key: key, requestDigest: Array(("digest " + key).utf8), status: empty ? 204 : 200,
                         etag: empty ? nil : "\"r\(record.revision)\"", body: empty ? [] : record.document, createdAt: createdAt)
    }

    static func commit(_ record: CustomizationRecord, _ answer: IdempotentAnswer?, history: Int = 100, expireBefore: Int = 0,
                       cap: Int = 1000) -> CustomizationCommit {
        CustomizationCommit(appId: "a", userId: record.userId, expectedRevision: record.revision - 1, record: record, change: .put,
                            historyRevisions: history, answer: answer, answersExpireBefore: expireBefore, maxAnswersPerUser: cap)
    }

    static func open(_ dir: TemporaryDirectory) async throws -> SQLiteStore {
        let store = try SQLiteStore(configuration: SQLiteStore.Configuration(path: dir.file("tabstore.sqlite")))
        try await store.executeOnWriter("INSERT OR IGNORE INTO apps (id, name, signing_secret, created_at) VALUES ('a', 'A', 's', 't')")
        return store
    }

    static func count(_ dir: TemporaryDirectory, _ sql: String) throws -> Int {
        try SQLiteConnection(path: dir.file("tabstore.sqlite")).scalarInt(sql) ?? -1
    }

    /// Two distinct keys whose 32-bit FNV-1a hashes are equal (a birthday search).
    static func collidingKeys() -> (String, String) {
        var seen: [UInt32: String] = [:]
        var index = 0
        while true {
            let key = "collide-\(index)"
            let hash = HistoryAnswers.hash(key.utf8)
            if let other = seen[hash] { return (other, key) }
            seen[hash] = key
            index += 1
        }
    }

    @Test("the list's stored form: entries newest first with their rows, expiry by time, removal by row, a ragged tail ignored")
    func listForm() {
        var list = HistoryAnswers()
        #expect(list.stored == nil)
        list.add(key: "old", createdAt: 100, rowid: 7)
        list.add(key: "new", createdAt: 200, rowid: 1 << 40)
        list.add(key: "new", createdAt: 200, rowid: 9)
        let stored = list.stored ?? []
        #expect(stored.count == 48)
        #expect(HistoryAnswers(stored) == list)
        #expect(HistoryAnswers(stored + [1, 2, 3]) == list)
        #expect(list.rows(mayHolding: "new", notBefore: 0) == [9, 1 << 40])
        #expect(list.rows(mayHolding: "old", notBefore: 100) == [7] && list.rows(mayHolding: "old", notBefore: 101).isEmpty)
        #expect(list.rows(mayHolding: "other", notBefore: 0).isEmpty)
        list.remove(rowid: 9)
        #expect(list.count == 2 && list.rows(mayHolding: "new", notBefore: 0) == [1 << 40])
        list.removeExpired(before: 150)
        #expect(list.entries.map(\.rowid) == [1 << 40])
        #expect(HistoryAnswers.seconds(-5) == 0 && HistoryAnswers.seconds(Int.max) == UInt32.max)
    }

    @Test("a keyed write's answer lives in its history row: a repeat finds its key taken, the replay is the row's document; a 204 replays empty")
    func answerInTheRow() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        let first = Self.record(1)
        try await store.commitCustomization(Self.commit(first, Self.answer("k1", for: first)))
        let second = Self.record(2)
        try await store.commitCustomization(Self.commit(second, Self.answer("k2", for: second, empty: true)))
        #expect(try Self.count(dir, "SELECT count(*) FROM idempotent_answers") == 0)
        #expect(try Self.count(dir, "SELECT count(answer_key) FROM customization_history") == 2)
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k1", notBefore: 0) == Self.answer("k1", for: first))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k2", notBefore: 0) == Self.answer("k2", for: second, empty: true))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k3", notBefore: 0) == nil)
        #expect(try await store.idempotentAnswer(appId: "a", userId: "other", key: "k1", notBefore: 0) == nil)
        // The same key again, on the next revision: taken (nothing stored); expired, it is free again.
        let third = Self.record(3)
        await #expect(throws: StoreConflict.self) { try await store.commitCustomization(Self.commit(third, Self.answer("k1", for: third))) }
        #expect(try await store.customization(appId: "a", userId: "u")?.revision == 2)
        try await store.commitCustomization(Self.commit(third, Self.answer("k1", for: third, createdAt: 5000), expireBefore: 2000))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k1", notBefore: 2000)?.body == third.document)
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k2", notBefore: 2000) == nil, "expired")
        await store.close()
        // After a restart, from the file.
        let reopened = try await Self.open(dir)
        #expect(try await reopened.idempotentAnswer(appId: "a", userId: "u", key: "k1", notBefore: 2000)?.body == third.document)
        await reopened.close()
    }

    @Test("an answer under many unkeyed revisions is found by its row, still taken, and replays")
    func answerDeepInTheChain() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        let first = Self.record(1)
        try await store.commitCustomization(Self.commit(first, Self.answer("deep", for: first)))
        for revision in 2...90 { try await store.commitCustomization(Self.commit(Self.record(revision), nil)) }
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "deep", notBefore: 0) == Self.answer("deep", for: first))
        let next = Self.record(91)
        await #expect(throws: StoreConflict.self) { try await store.commitCustomization(Self.commit(next, Self.answer("deep", for: next))) }
        // Another user's list never names this user's row (the row's app and user are compared too).
        #expect(try await store.idempotentAnswer(appId: "a", userId: "v", key: "deep", notBefore: 0) == nil)
        await store.close()
    }

    @Test("keys whose hashes collide are told apart by their bytes")
    func collidingHashes() async throws {
        let (one, two) = Self.collidingKeys()
        #expect(one != two && HistoryAnswers.hash(one.utf8) == HistoryAnswers.hash(two.utf8))
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        let first = Self.record(1), second = Self.record(2)
        try await store.commitCustomization(Self.commit(first, Self.answer(one, for: first)))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: two, notBefore: 0) == nil)
        try await store.commitCustomization(Self.commit(second, Self.answer(two, for: second)))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: one, notBefore: 0)?.body == first.document)
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: two, notBefore: 0)?.body == second.document)
        let third = Self.record(3)
        await #expect(throws: StoreConflict.self) { try await store.commitCustomization(Self.commit(third, Self.answer(one, for: third))) }
        await #expect(throws: StoreConflict.self) { try await store.commitCustomization(Self.commit(third, Self.answer(two, for: third))) }
        await store.close()
    }

    @Test("the retention cuts a row: its live answer moves to idempotent_answers and still replays; an expired one goes")
    func retentionMovesLiveAnswers() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        // Retention 2, answers made at 1000 + revision; at the end answers before 1010 have expired.
        for revision in 1...40 {
            let record = Self.record(revision)
            try await store.commitCustomization(Self.commit(record, Self.answer("k\(revision)", for: record, createdAt: 1000 + revision),
                                                            history: 2, expireBefore: revision < 32 ? 0 : 1010))
        }
        for revision in 1...40 {
            let replay = try await store.idempotentAnswer(appId: "a", userId: "u", key: "k\(revision)", notBefore: 1010)
            #expect(replay == (revision < 10 ? nil : Self.answer("k\(revision)", for: Self.record(revision), createdAt: 1000 + revision)))
        }
        // Every key taken exactly once: in the table or in a row the chain still holds, never both.
        let inRows = try Self.count(dir, "SELECT count(answer_key) FROM customization_history")
        let inTable = try Self.count(dir, "SELECT count(*) FROM idempotent_answers WHERE created_at >= 1010")
        #expect(inRows + inTable == 31 && inRows <= 18)
        #expect(try Self.count(dir, """
            SELECT count(*) FROM idempotent_answers AS t JOIN customization_history AS h
            ON h.app_id = t.app_id AND h.user_id = t.user_id AND h.answer_key = t.idempotency_key
            """) == 0)
        let retry = Self.record(41)
        await #expect(throws: StoreConflict.self) {
            try await store.commitCustomization(Self.commit(retry, Self.answer("k12", for: retry), history: 2, expireBefore: 1010))
        }
        await store.close()
    }

    @Test("past 32 answers in history rows the next go to idempotent_answers; the cap counts both, oldest inserted first; export lists each once")
    func capacityAndCap() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        for revision in 1...40 {
            let record = Self.record(revision)
            try await store.commitCustomization(Self.commit(record, Self.answer("k\(revision)", for: record), cap: revision < 40 ? 1000 : 10))
        }
        #expect(try Self.count(dir, "SELECT count(answer_key) FROM customization_history") <= HistoryAnswers.capacity)
        // The cap applies at the user's housekeeping (every 16th revision): the next is the 48th.
        for revision in 41...48 {
            let record = Self.record(revision)
            try await store.commitCustomization(Self.commit(record, Self.answer("k\(revision)", for: record), cap: 10))
        }
        let keys = try await store.userData(userId: "u", appId: "a", keep: 100).first?.answers.map(\.key) ?? []
        #expect(keys == (39...48).reversed().map { "k\($0)" }, "the ten inserted last, newest first")
        for revision in 1...48 {
            let replay = try await store.idempotentAnswer(appId: "a", userId: "u", key: "k\(revision)", notBefore: 0)
            #expect((replay != nil) == (revision >= 39))
        }
        #expect(try Self.count(dir, "SELECT count(*) FROM idempotent_answers") + Self.count(dir, "SELECT count(answer_key) FROM customization_history") == 10)
        await store.close()
    }

    @Test("keyed writes that change nothing keep the list true: the cap keeps exactly the newest answers, and an older live key stays taken")
    func capWithWritesThatChangeNothing() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        let noChange = { (key: String, revision: Int) in
            CustomizationCommit(appId: "a", userId: "u", expectedRevision: revision, record: nil, change: .put, historyRevisions: 100,
                                answer: IdempotentAnswer(key: key, requestDigest: Array(key.utf8), status: 200, etag: nil, body: Array("{}".utf8),
                                                         createdAt: 1000), maxAnswersPerUser: 3)
        }
        for revision in 1...3 {
            let record = Self.record(revision)
            try await store.commitCustomization(Self.commit(record, Self.answer("k\(revision)", for: record), cap: 3))
        }
        // Each write that changes nothing does the housekeeping: the cap of 3 evicts the oldest (k1, then k2).
        try await store.commitCustomization(noChange("k4", 3))
        try await store.commitCustomization(noChange("k5", 3))
        let keys = try await store.userData(userId: "u", appId: "a", keep: 100).first?.answers.map(\.key) ?? []
        #expect(keys == ["k5", "k4", "k3"])
        let retry = Self.record(4)
        await #expect(throws: StoreConflict.self) { try await store.commitCustomization(Self.commit(retry, Self.answer("k3", for: retry), cap: 3)) }
        #expect(try await store.customization(appId: "a", userId: "u")?.revision == 3)
        try await store.commitCustomization(noChange("k6", 3))
        #expect(try await store.userData(userId: "u", appId: "a", keep: 100).first?.answers.map(\.key) == ["k6", "k5", "k4"])
        #expect(try await store.idempotentAnswer(appId: "a", userId: "u", key: "k6", notBefore: 0) != nil)
        await store.close()
    }

    @Test("the store's delete of a customization keeps every live answer replaying: those in history rows and those naming one")
    func deleteKeepsAnswers() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        // 33 keyed revisions: 32 answers in history rows, the 33rd in idempotent_answers naming its row.
        for revision in 1...33 {
            let record = Self.record(revision)
            try await store.commitCustomization(Self.commit(record, Self.answer("k\(revision)", for: record)))
        }
        #expect(try Self.count(dir, "SELECT count(*) FROM idempotent_answers WHERE body_revision = 33") == 1)
        #expect(try await store.deleteCustomization(appId: "a", userId: "u", expectedRevision: nil))
        for revision in 1...33 {
            #expect(
                try await store.idempotentAnswer(appId: "a", userId: "u", key: "k\(revision)", notBefore: 0)?.body == Self.record(revision).document)
        }
        await store.close()
    }

    @Test("erase takes the answers in history rows with them; the store's delete of a customization keeps them replaying")
    func eraseAndDelete() async throws {
        let dir = TemporaryDirectory()
        let store = try await Self.open(dir)
        for user in ["gone", "kept"] {
            let record = Self.record(1, user: user)
            try await store.commitCustomization(Self.commit(record, Self.answer("k", for: record)))
        }
        #expect(try await store.eraseUser(userId: "gone", appId: "a"))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "gone", key: "k", notBefore: 0) == nil)
        #expect(try await store.userData(userId: "gone", appId: "a", keep: 100).isEmpty)
        #expect(try await store.deleteCustomization(appId: "a", userId: "kept", expectedRevision: nil))
        #expect(try await store.idempotentAnswer(appId: "a", userId: "kept", key: "k", notBefore: 0)?.body == Self.record(1, user: "kept").document)
        #expect(try await store.userData(userId: "kept", appId: "a", keep: 100).first?.answers.map(\.key) == ["k"])
        await store.close()
    }
}
