import Foundation
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

@Suite("Storage: failed commits and durability settings")
struct StorageDurabilityTests {
    /// Sizes of the batches the writer ran (committed or failed).
    final class Batches: @unchecked Sendable {
        let sizes = Locked<[Int]>([])
    }

    /// Reads a value on a fresh read-only connection to the store's file (what other connections see).
    static func read(_ path: String, _ sql: String) throws -> Int? {
        var options = SQLiteConnection.Options()
        options.readOnly = true
        return try SQLiteConnection(path: path, options: options).scalarInt(sql)
    }

    @Test("a COMMIT that fails (deferred foreign key) fails every caller of its batch, and stores nothing")
    func failedCommit() async throws {
        let dir = TemporaryDirectory()
        let batches = Batches()
        var configuration = SQLiteStore.Configuration(path: dir.file("tabstore.sqlite"))
        configuration.onBatch = { size, _ in batches.sizes.withLock { $0.append(size) } }
        let store = try SQLiteStore(configuration: configuration)
        // A constraint SQLite checks only at COMMIT: each statement succeeds, the commit is refused.
        try await store.executeOnWriter("""
            CREATE TABLE probe_parent (id INTEGER PRIMARY KEY);
            CREATE TABLE probe_child (parent INTEGER REFERENCES probe_parent(id) DEFERRABLE INITIALLY DEFERRED)
            """)
        // Keep the writer busy so the next writes queue up and go into one batch together.
        let busy = Task {
            try await store.executeOnWriter("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c")
        }
        try await Task.sleep(for: .milliseconds(50))
        async let violating: Void = store.executeOnWriter("INSERT INTO probe_child (parent) VALUES (42)")
        async let innocent = store.createApp(id: "innocent", name: "Innocent", signingSecret: "s", createdAt: "t")
        var failures: [String] = []
        do { try await violating } catch { failures.append("violating") }
        do { _ = try await innocent } catch { failures.append("innocent") }
        try await busy.value
        // Both writes ran in one batch (the test is only meaningful then).
        #expect(batches.sizes.withLock { $0 }.contains { $0 >= 2 })
        // Every caller of the batch hears of the failed commit: nobody is told "stored".
        #expect(failures == ["violating", "innocent"])
        // And nothing of the batch is stored.
        #expect(try await store.app("innocent") == nil)
        #expect(try Self.read(store.path, "SELECT count(*) FROM probe_child") == 0)
        // The writer goes on: the next batch commits.
        _ = try await store.createApp(id: "after", name: "After", signingSecret: "s", createdAt: "t")
        #expect(try await store.app("after") != nil)
        await store.close()
    }

    @Test("a write that fails halfway leaves nothing of itself, and its batch neighbours commit")
    func failedJobRollsBack() async throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: dir.file("tabstore.sqlite")))
        try await store.executeOnWriter("CREATE TABLE probe_rows (value INTEGER)")
        let busy = Task {
            try await store.executeOnWriter("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c")
        }
        try await Task.sleep(for: .milliseconds(50))
        // The first statement succeeds, the second fails: the job's savepoint must be rolled back.
        async let halfway: Void = store.executeOnWriter("INSERT INTO probe_rows VALUES (1); INSERT INTO no_such_table VALUES (1)")
        async let neighbour = store.createApp(id: "neighbour", name: "Neighbour", signingSecret: "s", createdAt: "t")
        var failed = false
        do { try await halfway } catch { failed = true }
        _ = try await neighbour
        try await busy.value
        #expect(failed)
        #expect(try Self.read(store.path, "SELECT count(*) FROM probe_rows") == 0)
        #expect(try await store.app("neighbour") != nil)
        await store.close()
    }

    /// `PRAGMA synchronous` of the service's writer connection, read through the writer hook
    /// (`executeOnWriter`) into a table every connection can read.
    static func writerSynchronous(_ live: LiveService) async throws -> Int? {
        try await live.service.sqlite!.executeOnWriter("""
            CREATE TABLE IF NOT EXISTS probe_pragma (value INTEGER);
            DELETE FROM probe_pragma;
            INSERT INTO probe_pragma SELECT synchronous FROM pragma_synchronous
            """)
        return try read(live.service.sqlite!.path, "SELECT value FROM probe_pragma")
    }

    @Test("the service's writer uses synchronous=FULL by default")
    func synchronousFullByDefault() async throws {
        try await withLiveService { live throws in
            #expect(try await Self.writerSynchronous(live) == 2)
        }
    }

    @Test("--durability normal gives the writer synchronous=NORMAL")
    func synchronousNormal() async throws {
        try await withLiveService(adjust: { $0.durabilityFull = false }) { live throws in
            #expect(try await Self.writerSynchronous(live) == 1)
        }
    }
}
