import Foundation
import Glibc
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStorePostgres
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Issue 27: a replica whose notification listener lost the database (a restart) missed what other replicas
/// committed meanwhile. Once it listens again it reads what it missed: its streams catch up from what is stored,
/// and followers whose signing secret was rotated meanwhile end.
@Suite("PostgreSQL listener: catching up after missed notifications", .serialized,
       .enabled(if: PostgresTestCluster.shared != nil, "no PostgreSQL binaries"))
struct ListenerCatchUpTests {
    /// A second store that signs its notifications as `live`'s own store does, so `live` never hears of its
    /// writes: what a replica misses while its listener is away.
    static func unheardStore(of live: LiveService, url: String) throws -> PostgresStore {
        let own = try #require(live.service.store as? PostgresStore)
        var configuration = PostgresStore.Configuration.loadedMachine(url: url)
        configuration.sender = own.sender
        configuration.maxConnections = 2
        return try PostgresStore(configuration: configuration)
    }

    @Test("after the listener reconnects, a stream gets the write it was never told of, and a follower verified by a secret rotated meanwhile ends")
    func catchUpAfterMissedNotifications() async throws {
        let url = try PostgresTestCluster.shared!.freshDatabase()
        try await withLiveService(adjust: { $0.databaseURL = url }) { live in
            let creds = try await Credentials.register(on: live)
            let events = creds.customization + "/events"
            let userStream = try await live.follow(.get(events).bearer(creds.userToken))
            let operatorStream = try await live.follow(.get(events).bearer(live.admin))
            for stream in [userStream, operatorStream] { #expect(try await FeedTests.next(stream)?.id == "0.1") }
            // A stored document as this version writes it: another user's, committed as the followed user's next revision.
            #expect(
                try await live.send(.patch(creds.app.userPath("model") + "/customization").bearer(live.admin).json(Sync.hide("bell"))).status == 200)
            let unheard = try Self.unheardStore(of: live, url: url)
            let model = try #require(try await unheard.customization(appId: creds.app.id, userId: "model"))
            let record = CustomizationRecord(appId: creds.app.id, userId: Credentials.user, revision: 1, schemaVersion: model.schemaVersion,
                                             document: model.document, updatedAt: model.updatedAt)
            try await unheard.commitCustomization(CustomizationCommit(appId: creds.app.id, userId: Credentials.user, expectedRevision: 0,
                                                                      record: record, change: .put, historyRevisions: 100))
            try await unheard.rotateSecret(appId: creds.app.id, signingSecret: "rotated-while-unheard-0123456789")
            await unheard.close()
            // Nothing told this replica: the streams wait (asserted as an outcome below: the next event is the catch-up).
            live.service.api.services.application.replicaChanged(StoreChange.unknown)  // what the listener says once it listens again
            let ended = try await FeedTests.next(userStream)
            #expect(ended?.event == "token-expired" && ended?.data?.contains("signing secret") == true, "\(String(describing: ended))")
            let caughtUp = try await FeedTests.next(operatorStream)
            #expect(caughtUp?.id == "1.1" && caughtUp?.data?.contains("bell") == true, "\(String(describing: caughtUp))")
            // And a plain GET on this replica serves the stored revision, not a cached older one.
            #expect(try await live.send(.get(creds.customization).bearer(live.admin)).revision == 1)
        }
    }

    @Test("a PostgreSQL restart: the listener reconnects by itself and a stream opened before it sees a write made through another replica after it")
    func restartReconnects() async throws {
        let cluster = try PostgresTestCluster.dedicated()
        let url = try cluster.freshDatabase()
        defer { try? cluster.pgCtl(["-m", "immediate", "stop"]) }
        let writer = try LiveService(adjust: { $0.databaseURL = url; $0.databaseConnections = 2 })
        let reader = try LiveService(adjust: { $0.databaseURL = url; $0.databaseConnections = 2 })
        do {
            try await restart(cluster, writer: writer, reader: reader)
        } catch {
            await writer.stop()
            await reader.stop()
            throw error
        }
        await writer.stop()
        await reader.stop()
    }

    private func restart(_ cluster: PostgresTestCluster, writer: LiveService, reader: LiveService) async throws {
        let creds = try await Credentials.register(on: writer)
        let stream = try await reader.follow(.get(creds.customization + "/events").bearer(reader.admin))
        #expect(try await FeedTests.next(stream)?.id == "0.1")
        try cluster.pgCtl(["-m", "fast", "restart"])
        // Writes through the other replica until one is acknowledged (the first ones may meet the restart: 503).
        var acknowledged: TestResponse?
        for _ in 0..<300 where acknowledged == nil {
            let answer = try await writer.send(.patch(creds.customization).bearer(writer.admin).json(Sync.hide("bell")))
            if answer.status == 200 { acknowledged = answer } else { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(acknowledged?.etag == "\"1.1\"")
        // Notified, or caught up after the listener's reconnect: either way the stream gets it.
        var seen: [String] = []
        while seen.last != "1.1", let event = try await FeedTests.next(stream) { seen.append(event.id ?? event.event ?? "?") }
        #expect(seen.last == "1.1", "\(seen)")
    }

    @Test("a listener connection that stays open but stops answering (its backend stopped) is found by its probe and replaced; the stream catches up")
    func stuckListenerReplaced() async throws {
        let url = try PostgresTestCluster.shared!.freshDatabase()
        let admin = try PostgresConnection(conninfo: url)
        let listeners = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' ORDER BY pid"
        // The reader's bound is short: its listener probes every 3 s of quiet.
        let reader = try LiveService(adjust: { $0.databaseURL = url; $0.databaseConnections = 2; $0.databaseTimeout = 3 })
        var listenerPid: Int32?
        for _ in 0..<300 where listenerPid == nil {
            let rows = try admin.query(listeners)
            if rows.count == 1 { listenerPid = Int32(rows.int(0, 0)) } else { try await Task.sleep(for: .milliseconds(20)) }
        }
        let writer = try LiveService(adjust: { $0.databaseURL = url; $0.databaseConnections = 2 })
        var stopped = false
        do {
            let pid = try #require(listenerPid)
            let creds = try await Credentials.register(on: writer)
            // The reader's short bound may pass on a loaded machine (a 503 with no event): open the stream again then.
            var opened: SSEClient?
            for _ in 0..<20 where opened == nil {
                let stream = try await reader.follow(.get(creds.customization + "/events").bearer(reader.admin))
                if try await FeedTests.next(stream)?.id == "0.1" { opened = stream } else { try await Task.sleep(for: .milliseconds(500)) }
            }
            let stream = try #require(opened)
            kill(pid, SIGSTOP)  // the connection stays open (the kernel still acknowledges), nothing comes through it
            stopped = true
            #expect(try await writer.send(.patch(creds.customization).bearer(writer.admin).json(Sync.hide("bell"))).status == 200)
            // Found by the probe after a quiet bound, and its bound again to answer: on a loaded machine, give it time.
            #expect(try await FeedTests.next(stream, timeout: 90)?.id == "1.1")
            kill(pid, SIGCONT)
            stopped = false
        } catch {
            if stopped, let listenerPid { kill(listenerPid, SIGCONT) }
            await writer.stop()
            await reader.stop()
            throw error
        }
        await writer.stop()
        await reader.stop()
    }
}
