import Foundation
import Testing
@testable import TabStorePostgres
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// The replication settings check and the routing of reads that may lag (issue 32). A real standby and a real
/// failover are `scripts/postgres-failover` and `scripts/postgres-standby-reads`; here the "standby" is a second
/// database that never receives the writes, which is a standby that lags forever.
@Suite("PostgreSQL replication and reads from standbys", .enabled(if: PostgresTestCluster.shared != nil, "no PostgreSQL binaries: see the loud message above"))
struct PostgresReplicationTests {
    var cluster: PostgresTestCluster { PostgresTestCluster.shared! }

    func write(_ store: PostgresStore, user: String, revision: Int) async throws {
        _ = try await store.updateCustomization(appId: "app", userId: user, expectedRevision: revision - 1) { _ in
            CustomizationRecord(appId: "app", userId: user, revision: revision, schemaVersion: 1, document: [UInt8(revision)], updatedAt: "t")
        }
    }

    @Test("a primary without a synchronous standby is reported as such: not lossless, in the log's fields and the gauges")
    func settingsCheck() async throws {
        let store = try PostgresStore(configuration: .loadedMachine(url: try cluster.freshDatabase()))
        let replication = try #require(store.startupReplication)
        #expect(!replication.inRecovery && replication.synchronousStandbyNames.isEmpty && replication.synchronousCommit == "on")
        #expect(!replication.lossless)
        #expect(replication.synchronousStandbys == 0)  // the test cluster's role is a superuser: it sees pg_stat_replication
        let gauges = await store.backendGauges()
        #expect(gauges.contains(BackendGauge(name: "tabstore_postgres_primary", help: "", value: 1)))
        #expect(gauges.contains(BackendGauge(name: "tabstore_postgres_lossless_failover", help: "", value: 0)))
        #expect(gauges.contains(BackendGauge(name: "tabstore_postgres_synchronous_commit", help: "", labels: [("setting", "on")], value: 1)))
        #expect(
            PostgresReplication(
                inRecovery: false, synchronousCommit: "on", synchronousStandbyNames: "s1", synchronousStandbys: 1, streamingStandbys: 1
            ).lossless)
        #expect(
            !PostgresReplication(
                inRecovery: false, synchronousCommit: "local", synchronousStandbyNames: "s1", synchronousStandbys: 1, streamingStandbys: 1
            ).lossless)
        #expect(
            !PostgresReplication(
                inRecovery: false, synchronousCommit: "on", synchronousStandbyNames: "s1", synchronousStandbys: 0, streamingStandbys: 0
            ).lossless)
        await store.close()
    }

    @Test("a read that may lag goes to the standby, except for the user's own write and a revision the client named")
    func readRouting() async throws {
        let primaryURL = try cluster.freshDatabase()
        let lagging = try cluster.freshDatabase()
        // The lagging "standby" has the tables (and the app), never the writes.
        let standbyStore = try PostgresStore(configuration: .loadedMachine(url: lagging))
        _ = try await standbyStore.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await write(standbyStore, user: "old", revision: 1)
        await standbyStore.close()
        var configuration = PostgresStore.Configuration.loadedMachine(url: primaryURL)
        configuration.readURL = lagging
        let store = try PostgresStore(configuration: configuration)
        store.observeChanges { _ in }  // the listener starts with its first observer (the service's, in tab-server)
        #expect(await eventually { store.routing?.isListening == true })  // before, every read goes to the primary
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await write(store, user: "mine", revision: 1)
        // Its own write: the "standby" never replays it, but it is not in recovery (NULL position), so only the
        // revision check can catch it here; the position check is what a real standby meets (postgres-standby-reads).
        #expect(try await store.customizationForRead(appId: "app", userId: "mine", atLeast: 1)?.revision == 1)
        // Nothing named: this one is answered by the "standby" (which lacks it), proving reads do go there.
        #expect(try await store.customizationForRead(appId: "app", userId: "mine", atLeast: nil) == nil)
        // A user only the "standby" has: answered there.
        #expect(try await store.customizationForRead(appId: "app", userId: "old", atLeast: nil)?.revision == 1)
        let gauges = await store.backendGauges()
        #expect(gauges.contains(BackendGauge(name: "tabstore_postgres_lagging_reads_total", help: "", labels: [("served_by", "standby")], value: 2)))
        #expect(gauges.contains(BackendGauge(name: "tabstore_postgres_lagging_reads_total", help: "", labels: [("served_by", "primary")], value: 1)))
        await store.close()
    }

    @Test("a standby that cannot be reached: the primary answers")
    func unreachableStandby() async throws {
        var configuration = PostgresStore.Configuration.loadedMachine(url: try cluster.freshDatabase())
        configuration.readURL = "postgres://\(PostgresTestCluster.user):x@127.0.0.1:1/none"
        let store = try PostgresStore(configuration: configuration)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await write(store, user: "u", revision: 1)
        #expect(try await store.customizationForRead(appId: "app", userId: "u", atLeast: nil)?.revision == 1)
        await store.close()
    }

    @Test("a replica reads no standby before it listens for other replicas' changes, then none below the primary's position then")
    func startFloor() async throws {
        let url = try cluster.freshDatabase()
        let writer = try PostgresStore(configuration: .loadedMachine(url: url))
        _ = try await writer.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await write(writer, user: "before", revision: 1)
        await writer.close()
        let admin = try PostgresConnection(conninfo: url)
        let position = UInt64(try #require(try admin.query(PostgresStore.currentPosition).scalarInt))
        var configuration = PostgresStore.Configuration.loadedMachine(url: url)
        configuration.readURL = url
        let store = try PostgresStore(configuration: configuration)
        #expect(store.startupReadURL == .notInRecovery)
        let routing = try #require(store.routing)
        // Until it listens, nothing it might not hear of can be excluded: every read goes to the primary; then every
        // user, one this replica never heard of included, needs a standby at least as far as the primary was.
        #expect(!routing.isListening && routing.required(appId: "app", userId: "anyone") == .max)
        store.observeChanges { _ in }  // the listener starts with its first observer (the service's, in tab-server)
        #expect(await eventually { routing.isListening })
        #expect(routing.required(appId: "app", userId: "before") >= position)
        #expect(routing.required(appId: "app", userId: "anyone") >= position)
        await store.close()
    }

    @Test("a read URL on another cluster: start-up stops naming both identifiers; found later, its rows are never served")
    func foreignCluster() async throws {
        let other = try PostgresTestCluster.dedicated()
        let foreignURL = try other.freshDatabase()
        let foreign = try PostgresStore(configuration: .loadedMachine(url: foreignURL))
        _ = try await foreign.createApp(id: "app", name: "Other", signingSecret: "s", createdAt: "t")
        for revision in 1...3 { try await write(foreign, user: "alice", revision: revision) }
        await foreign.close()
        var configuration = PostgresStore.Configuration.loadedMachine(url: try cluster.freshDatabase())
        configuration.readURL = foreignURL
        do {
            _ = try PostgresStore(configuration: configuration)
            Issue.record("a read URL on another cluster was taken")
        } catch let error as ConfigurationError {
            #expect(error.description.contains("another cluster"))
            #expect(!error.description.contains(PostgresTestCluster.password))
        }
        // Unreachable at start (reported, not refused), then back: every read of it is answered by the primary.
        try other.pgCtl(["stop", "-m", "fast", "-w"])
        let store = try PostgresStore(configuration: configuration)
        guard case .unreachable? = store.startupReadURL else {
            Issue.record("expected the read URL to be reported unreachable, got \(String(describing: store.startupReadURL))")
            return
        }
        try other.start()
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await write(store, user: "alice", revision: 1)
        #expect(try await store.customizationForRead(appId: "app", userId: "alice", atLeast: nil)?.revision == 1)  // not the other's 3
        let gauges = await store.backendGauges()
        #expect(gauges.contains(BackendGauge(name: "tabstore_postgres_read_url_other_cluster_total", help: "", value: 1)))
        await store.close()
    }

    @Test("positions: a user's own is required until the standby passes it; too many collapse into one floor")
    func positions() {
        let routing = PostgresReadRouting(primarySystem: "")
        // Before the listener listens no standby serves: it would not hear of other replicas' changes.
        #expect(routing.required(appId: "a", userId: "u") == .max)
        routing.listening(from: 0)
        #expect(routing.required(appId: "a", userId: "u") == 0)
        routing.committed(appId: "a", userId: "u", position: 100)
        routing.committed(appId: "a", userId: "u", position: 50)
        #expect(routing.required(appId: "a", userId: "u") == 100)
        #expect(routing.required(appId: "a", userId: "v") == 0)
        routing.listening(from: 70)  // listening again after a reconnect: what came meanwhile was missed
        #expect(routing.required(appId: "a", userId: "v") == 70 && routing.required(appId: "a", userId: "u") == 100)
        for index in 0...PostgresReadRouting.maxEntries { routing.committed(appId: "a", userId: "x\(index)", position: UInt64(200 + index)) }
        // Collapsed: every user needs at least the highest position kept.
        #expect(routing.required(appId: "a", userId: "v") >= UInt64(200 + PostgresReadRouting.maxEntries - 1))
    }
}
