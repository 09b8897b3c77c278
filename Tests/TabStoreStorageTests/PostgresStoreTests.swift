import Foundation
import Testing
@testable import TabStorePostgres
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// What only the PostgreSQL backend has: start-up errors, migrations by several replicas at once, a database
/// that goes away and comes back, ids compared as bytes by the database, and replicas sharing one database.
@Suite("PostgreSQL backend", .enabled(if: PostgresTestCluster.shared != nil, "no PostgreSQL binaries: see the loud message above"))
struct PostgresStoreTests {
    var cluster: PostgresTestCluster { PostgresTestCluster.shared! }

    func openError(_ url: String) -> String {
        do {
            _ = try PostgresStore(configuration: PostgresStore.Configuration.loadedMachine(url: url))
            return "opened"
        } catch {
            return "\(error)"
        }
    }

    @Test("start-up errors say what is wrong (unreachable, wrong password, missing database) and never print the password")
    func startupErrors() throws {
        let closed = openError("postgres://\(PostgresTestCluster.user):not-printed-secret@127.0.0.1:1/postgres")
        #expect(closed.contains("cannot connect to PostgreSQL") && closed.contains("127.0.0.1") && closed.contains("port 1"), "\(closed)")
        #expect(closed.contains("refused"), "\(closed)")
        let wrong = openError(cluster.url(database: "postgres", password: "not-printed-secret"))
        #expect(wrong.contains("password authentication failed"), "\(wrong)")
        let missing = openError(cluster.url(database: "no_such_database"))
        #expect(missing.contains("no_such_database") && missing.contains("does not exist"), "\(missing)")
        // A bad percent-escape: libpq's own message would quote the password it could not decode.
        let unparsable = openError("postgres://\(PostgresTestCluster.user):not-printed-secret%zz@127.0.0.1:1/postgres")
        #expect(unparsable.contains("TAB_SERVER_DATABASE_URL") && unparsable.contains("percent-encoded"), "\(unparsable)")
        var configuration = PostgresStore.Configuration.loadedMachine(url: try cluster.freshDatabase())
        configuration.readURL = "postgres://\(PostgresTestCluster.user):not-printed-secret%zz@127.0.0.1:1/postgres"
        var unparsableRead = ""
        do { _ = try PostgresStore(configuration: configuration) } catch { unparsableRead = String(describing: error) }
        #expect(unparsableRead.contains("TAB_SERVER_DATABASE_READ_URL"), "\(unparsableRead)")
        for message in [closed, wrong, missing, unparsable, unparsableRead] {
            #expect(!message.contains("not-printed-secret") && !message.contains(PostgresTestCluster.password))
        }
    }

    @Test("six replicas starting at once on an empty database: one migrates under the advisory lock, all open")
    func concurrentMigrations() async throws {
        let url = try cluster.freshDatabase()
        let opened = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    let store = try PostgresStore(configuration: PostgresStore.Configuration.loadedMachine(url: url))
                    await store.close()
                    return true
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(opened == 6)
        let db = try PostgresConnection(conninfo: url)
        #expect(try db.query("SELECT count(*) FROM tabstore_migrations").scalarInt == PostgresMigrations.latestVersion)
        try db.execute("INSERT INTO tabstore_migrations (version, name, applied_at) VALUES (99, 'future', 'x')")
        let newer = openError(url)
        #expect(newer.contains("newer than this tab-server understands"), "\(newer)")
    }

    @Test("ids are bytes: é precomposed and decomposed are two users; apps list in byte order")
    func idsAreBytes() async throws {
        let store = try TestBackend.postgres.openStore(TemporaryDirectory())
        for id in ["b", "B", "a\u{E9}", "ae\u{301}", "a"] {
            _ = try await store.createApp(id: id, name: id, signingSecret: "s", createdAt: "t")
        }
        // Byte order: "B" (0x42) < "a" < "ae\u{301}" (0x65) < "a\u{E9}" (0xC3) < "b".
        #expect(try await store.listApps(after: nil, limit: 10).map { Array($0.id.utf8) }
            == ["B", "a", "ae\u{301}", "a\u{E9}", "b"].map { Array($0.utf8) })
        for (user, revision) in [("\u{E9}", 1), ("e\u{301}", 2)] {
            _ = try await store.updateCustomization(appId: "a", userId: user, expectedRevision: 0) { _ in
                CustomizationRecord(appId: "a", userId: user, revision: revision, schemaVersion: 1, document: [UInt8(revision)], updatedAt: "t")
            }
        }
        #expect(try await store.customization(appId: "a", userId: "\u{E9}")?.document == [1])
        #expect(try await store.customization(appId: "a", userId: "e\u{301}")?.document == [2])
        #expect(try await store.customizationCount() == 2)
        await store.close()
    }

    @Test("documents are stored byte for byte, NUL and invalid UTF-8 included")
    func binaryDocuments() async throws {
        let store = try TestBackend.postgres.openStore(TemporaryDirectory())
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        let document: [UInt8] = [0, 0xFF, 0xC3, 0x28, 0x5C, 0x27, 0x00] + Array(repeating: 0x41, count: 70_000)
        _ = try await store.updateCustomization(appId: "app", userId: "u", expectedRevision: 0) { _ in
            CustomizationRecord(appId: "app", userId: "u", revision: 1, schemaVersion: 1, document: document, updatedAt: "t")
        }
        #expect(try await store.customization(appId: "app", userId: "u")?.document == document)
        await store.close()
    }

    @Test("the database goes away: requests get 503 and /readyz says so; once it is back they succeed and nothing is lost")
    func databaseOutage() async throws {
        let url = try cluster.freshDatabase()
        let database = String(url.split(separator: "/").last!)
        let admin = try PostgresConnection(conninfo: cluster.url(database: "postgres"))
        try await withLiveService(adjust: { $0.databaseURL = url }) { live in
            let creds = try await Credentials.register(on: live, schema: Seeds.behaviorAllAutomatic)
            let before = try await live.send(.put(creds.customization).bearer(creds.userToken).json(#"{"tabs": {}}"#))
            #expect(before.status == 200)
            // From the server's side this is a restart: every connection is cut and no new one is accepted.
            try admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
            try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [.text(database)])
            let down = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(down.status == 503)
            #expect(down.header("Retry-After") != nil)
            #expect(try await live.send(.get("/readyz")).status == 503)
            try admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
            #expect(try await live.send(.get("/readyz")).status == 200)
            let after = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(after.status == 200)
            #expect(after.field("revision") == before.field("revision"))
        }
    }

    @Test("pooled connections the server closed while idle (a restart, terminated backends) are replaced before use: no request fails")
    func idleConnectionsClosedByTheServer() async throws {
        let url = try cluster.freshDatabase()
        let database = String(url.split(separator: "/").last!)
        let admin = try PostgresConnection(conninfo: cluster.url(database: "postgres"))
        let store = try PostgresStore(configuration: .loadedMachine(url: url))
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        // Several connections in the pool, idle.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try await store.customization(appId: "app", userId: "u") } }
            try await group.waitForAll()
        }
        let backends = "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()"
        #expect(try admin.query(backends, [.text(database)]).scalarInt ?? 0 >= 1)
        // Each backend says goodbye (FATAL: terminating connection) and closes; wait until every one is gone.
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [.text(database)])
        #expect(await eventually { (try? admin.query(backends, [.text(database)]).scalarInt) == 0 })
        for _ in 0..<12 {
            #expect(try await store.customization(appId: "app", userId: "u") == nil)
        }
        await store.close()
    }

    @Test("forEachCustomization walks every row once, in byte order of user ids, across pages of 500")
    func forEachAcrossPages() async throws {
        let url = try cluster.freshDatabase()
        let store = try PostgresStore(configuration: PostgresStore.Configuration.loadedMachine(url: url))
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        _ = try await store.createApp(id: "other", name: "Other", signingSecret: "s", createdAt: "t")
        let db = try PostgresConnection(conninfo: url)
        try db.execute("""
            INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at)
            SELECT 'app', 'u' || i, i, 1, '\\x7b7d'::bytea, 't' FROM generate_series(1, 1234) AS i;
            INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES ('other', 'x', 1, 1, '\\x7b7d'::bytea, 't')
            """)
        var seen: [String] = []
        var revisionSum = 0
        try await store.forEachCustomization(appId: "app") { record in
            seen.append(record.userId)
            revisionSum += record.revision
            #expect(record.document == Array("{}".utf8))
        }
        #expect(seen.count == 1234 && Set(seen).count == 1234)
        #expect(revisionSum == 1234 * 1235 / 2)
        #expect(seen.map { Array($0.utf8) } == seen.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        // The pool is whole again: the session's connection came back (or was replaced).
        #expect(try await store.customizationCount() == 1235)
        await store.close()
    }

    @Test("a statement the server ends for its lock_timeout or statement_timeout (a table locked by another session) is 'unavailable' (503), not a bug (500)")
    func serverSideTimeoutIsUnavailable() async throws {
        let url = try PostgresTestCluster.shared!.freshDatabase()
        let store = try PostgresStore(configuration: PostgresStore.Configuration.loadedMachine(url: url))
        await store.close()
        let holder = try PostgresConnection(conninfo: url)
        try holder.execute("BEGIN; LOCK TABLE customizations IN ACCESS EXCLUSIVE MODE")
        // Bounded by the server only (no client-side deadline), so it is the server's error that comes back.
        let waiting = try PostgresConnection(conninfo: url, sessionTimeoutSeconds: 0.5)
        var failure: PostgresFailure?
        do {
            _ = try waiting.query("SELECT revision FROM customizations WHERE app_id = $1", [.text("a")])
        } catch {
            failure = error
        }
        try holder.execute("ROLLBACK")
        let refused = try #require(failure)
        #expect(refused.sqlState == "55P03" || refused.sqlState == "57014", "\(refused.sqlState) \(refused.message)")
        #expect(refused.isUnavailable)
        #expect((PostgresPool.storageError(refused) as? StorageError)?.isUnavailable == true)
    }
}
