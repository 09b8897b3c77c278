import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Storage (SQLite, and PostgreSQL for the conformance tests)")
struct StorageTests {
    func openStore(_ dir: TemporaryDirectory, groupCommit: Bool = true) throws -> SQLiteStore {
        var configuration = SQLiteStore.Configuration(path: dir.file("tabstore.sqlite"))
        configuration.groupCommit = groupCommit
        return try SQLiteStore(configuration: configuration)
    }

    func record(_ appId: String, _ userId: String, revision: Int) -> CustomizationRecord {
        CustomizationRecord(appId: appId, userId: userId, revision: revision, schemaVersion: 1,
                            document: Array("{\"revision\":\(revision)}".utf8), updatedAt: Timestamp.now())
    }

    @Test("migrations run fresh and again without changes; WAL and foreign keys are on")
    func migrations() throws {
        let dir = TemporaryDirectory()
        let db = try SQLiteConnection(path: dir.file("m.sqlite"))
        try Migrations.migrate(db, now: "t1")
        try Migrations.migrate(db, now: "t2")
        #expect(try db.scalarInt("SELECT count(*) FROM tabstore_migrations") == Migrations.latestVersion)
        #expect(try db.scalarText("SELECT applied_at FROM tabstore_migrations WHERE version = 1") == "t1")
        #expect(try db.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try db.scalarInt("PRAGMA synchronous") == 2)
    }

    @Test("a database from a newer version is refused with a clear message")
    func futureDatabase() async throws {
        let dir = TemporaryDirectory()
        let store = try openStore(dir)
        await store.close()
        let db = try SQLiteConnection(path: dir.file("tabstore.sqlite"))
        try db.run("INSERT INTO tabstore_migrations (version, name, applied_at) VALUES (99, 'future', 'x')")
        #expect {
            _ = try openStore(dir)
        } throws: { error in
            "\(error)".contains("newer than this tab-server understands")
        }
    }

    @Test("a file that is not a database is refused with a clear message")
    func notADatabase() throws {
        let dir = TemporaryDirectory()
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: dir.file("tabstore.sqlite")))
        #expect {
            _ = try openStore(dir)
        } throws: { error in
            "\(error)".contains("is not a usable SQLite database")
        }
    }

    @Test("apps: create, conflict, list with paging, rotate, delete cascades", arguments: PostgresTestCluster.backends)
    func apps(_ backend: TestBackend) async throws {
        let dir = TemporaryDirectory()
        let store = try backend.openStore(dir)
        for id in ["b", "a", "c"] {
            _ = try await store.createApp(id: id, name: "App \(id)", signingSecret: "s-\(id)", createdAt: "t")
        }
        await #expect(throws: StoreConflict.alreadyExists) {
            _ = try await store.createApp(id: "a", name: "again", signingSecret: "x", createdAt: "t")
        }
        #expect(try await store.listApps(after: nil, limit: 2).map(\.id) == ["a", "b"])
        #expect(try await store.listApps(after: "b", limit: 2).map(\.id) == ["c"])
        try await store.rotateSecret(appId: "a", signingSecret: "new")
        #expect(try await store.app("a")?.signingSecret == "new")
        await #expect(throws: StoreConflict.notFound) { try await store.rotateSecret(appId: "zz", signingSecret: "x") }

        let schema = try await store.addSchemaVersion(appId: "a", expectedCurrent: 0, makeDocument: { Array("{\"v\":\($0)}".utf8) }, createdAt: "t")
        #expect(schema.version == 1)
        await #expect(throws: StoreConflict.revisionMismatch(current: 1)) {
            _ = try await store.addSchemaVersion(appId: "a", expectedCurrent: 0, makeDocument: { _ in [] }, createdAt: "t")
        }
        _ = try await store.updateCustomization(appId: "a", userId: "u", expectedRevision: nil) { _ in record("a", "u", revision: 1) }
        #expect(try await store.deleteApp("a"))
        #expect(try await store.app("a") == nil)
        #expect(try await store.schemaVersion(appId: "a", version: 1) == nil)
        #expect(try await store.customization(appId: "a", userId: "u") == nil)
        #expect(try await !store.deleteApp("a"))
        // A write for a deleted app fails instead of leaving an orphan row.
        await #expect(throws: StoreConflict.notFound) {
            _ = try await store.updateCustomization(appId: "a", userId: "u", expectedRevision: nil) { _ in record("a", "u", revision: 1) }
        }
        await store.close()
    }

    @Test("compare-and-set by revision", arguments: PostgresTestCluster.backends)
    func compareAndSet(_ backend: TestBackend) async throws {
        let dir = TemporaryDirectory()
        let store = try backend.openStore(dir)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        _ = try await store.updateCustomization(appId: "app", userId: "u", expectedRevision: 0) { _ in record("app", "u", revision: 1) }
        await #expect(throws: StoreConflict.revisionMismatch(current: 1)) {
            _ = try await store.updateCustomization(appId: "app", userId: "u", expectedRevision: 0) { _ in record("app", "u", revision: 2) }
        }
        let updated = try await store.updateCustomization(appId: "app", userId: "u", expectedRevision: 1) { current in
            record("app", "u", revision: (current?.revision ?? 0) + 1)
        }
        #expect(updated?.revision == 2)
        await #expect(throws: StoreConflict.revisionMismatch(current: 2)) {
            _ = try await store.deleteCustomization(appId: "app", userId: "u", expectedRevision: 1)
        }
        #expect(try await store.deleteCustomization(appId: "app", userId: "u", expectedRevision: 2))
        await store.close()
    }

    @Test("8 concurrent writers × 500 changes on one user end at exactly revision 4000, nothing lost", arguments: PostgresTestCluster.backends)
    func concurrentWriters(_ backend: TestBackend) async throws {
        let dir = TemporaryDirectory()
        let store = try backend.openStore(dir)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for step in 0..<500 {
                        _ = try await store.updateCustomization(appId: "app", userId: "u", expectedRevision: nil) { current in
                            // Each change appends its own mark to the document: every one must survive.
                            var marks = current.map { String(decoding: $0.document, as: UTF8.self) } ?? ""
                            marks += "\(writer).\(step);"
                            return CustomizationRecord(appId: "app", userId: "u", revision: (current?.revision ?? 0) + 1,
                                                       schemaVersion: 1, document: Array(marks.utf8), updatedAt: "t")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try #require(try await store.customization(appId: "app", userId: "u"))
        #expect(final.revision == 4000)
        let marks = Set(String(decoding: final.document, as: UTF8.self).split(separator: ";").map(String.init))
        #expect(marks.count == 4000)
        #expect(marks.contains("7.499"))
        await store.close()
    }

    @Test("one caller's refused change does not affect another's in the same batch", arguments: PostgresTestCluster.backends)
    func isolation(_ backend: TestBackend) async throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        let store = try backend.openStore(dir)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for user in 0..<64 {
                group.addTask {
                    do {
                        _ = try await store.updateCustomization(appId: "app", userId: "u\(user)", expectedRevision: nil) { _ in
                            if user % 2 == 1 { throw Refused() }
                            return record("app", "u\(user)", revision: 1)
                        }
                        return true
                    } catch is Refused {
                        return false
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 32)
        var stored: [String] = []
        try await store.forEachCustomization(appId: "app") { stored.append($0.userId) }
        #expect(stored.count == 32)
        #expect(stored.allSatisfy { Int($0.dropFirst())! % 2 == 0 })
        await store.close()
    }

    @Test("readers see only committed revisions, increasing", arguments: PostgresTestCluster.backends)
    func readersSeeCommitted(_ backend: TestBackend) async throws {
        let dir = TemporaryDirectory()
        let store = try backend.openStore(dir)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        let writes = Task {
            for revision in 1...300 {
                _ = try await store.updateCustomization(appId: "app", userId: "u", expectedRevision: nil) { _ in
                    record("app", "u", revision: revision)
                }
            }
        }
        var last = 0
        var observed = 0
        while last < 300 {
            let seen = try await store.customization(appId: "app", userId: "u")
            let revision = seen?.revision ?? 0
            #expect(revision >= last)
            if let seen { #expect(seen.document == Array("{\"revision\":\(revision)}".utf8)) }
            last = revision
            observed += 1
        }
        try await writes.value
        #expect(observed > 1)
        await store.close()
    }

    @Test("reopening after close keeps everything; backup is a consistent copy")
    func reopenAndBackup() async throws {
        let dir = TemporaryDirectory()
        do {
            let store = try openStore(dir, groupCommit: false)
            _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
            for user in 0..<20 {
                _ = try await store.updateCustomization(appId: "app", userId: "u\(user)", expectedRevision: nil) { _ in
                    record("app", "u\(user)", revision: user + 1)
                }
            }
            try await store.backup(to: dir.file("backup.sqlite"))
            await store.close()
        }
        let reopened = try openStore(dir)
        #expect(try await reopened.customizationCount() == 20)
        #expect(try await reopened.customization(appId: "app", userId: "u7")?.revision == 8)
        await reopened.close()
        var configuration = SQLiteStore.Configuration(path: dir.file("backup.sqlite"))
        configuration.readers = 1
        let copy = try SQLiteStore(configuration: configuration)
        #expect(try await copy.customizationCount() == 20)
        #expect(try await copy.app("app")?.name == "App")
        await copy.close()
    }
}
