import Dispatch
import Foundation
import Glibc
import Testing
@testable import TabStorePostgres
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Issue 27, "every database call is bounded": a PostgreSQL that stops answering (every process stopped, as a stuck
/// disk or a network partition looks) gives a clear 503 once the bound passes, never a request that hangs, and the
/// service serves again by itself once the database answers.
@Suite("PostgreSQL frozen: bounded answers", .serialized)
struct DatabaseFreezeTests {
    @Test("a read and a write while every PostgreSQL process is stopped get 503 database-unavailable with Retry-After; after SIGCONT, 200")
    func frozenDatabase() async throws {
        guard PostgresTestCluster.shared != nil else { return }
        let cluster = try PostgresTestCluster.dedicated()
        let url = try cluster.freshDatabase()
        try await withLiveService(adjust: { $0.databaseURL = url }) { live in
            let app = try await Credentials.App.register(on: live, id: "app.freeze", schema: Seeds.behaviorAllAutomatic)
            let path = app.userPath("u") + "/customization"
            let token = app.token(for: "u")
            #expect(try await live.send(.patch(path).bearer(token).json(Sync.hide("bell"))).status == 200)
            // Made with headroom for a loaded machine; the bound under test from here on.
            try #require(live.service.store as? PostgresStore).pool.setRequestBound(1)
            try cluster.signalAll(SIGSTOP)
            var thawed = false
            defer { if !thawed { try? cluster.signalAll(SIGCONT) } }
            // Other users' requests, so no cache answers them; each must end (the test would hang otherwise).
            let read = try await live.send(.get(app.userPath("other") + "/customization").bearer(app.token(for: "other")))
            let write = try await live.send(.patch(path).bearer(token).json(Sync.hide("climate")))
            for answer in [read, write] {
                #expect(answer.status == 503 && answer.problemType == "urn:tabstore:problem:database-unavailable", "\(answer.status) \(answer.text)")
                #expect(answer.header("Retry-After") != nil)
            }
            #expect(try await live.send(.get("/readyz")).status == 503)
            try cluster.signalAll(SIGCONT)
            thawed = true
            // Ready again by itself: connections that timed out were discarded, new ones open.
            var ready = 0
            for _ in 0..<200 where ready != 200 {
                ready = try await live.send(.get("/readyz")).status
                if ready != 200 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(ready == 200)
            try #require(live.service.store as? PostgresStore).pool.setRequestBound(30)
            let after = try await live.send(.patch(path).bearer(token).json(Sync.hide("climate")))
            #expect(after.status == 200, "\(after.text)")
            #expect(try await live.send(.get(path).bearer(token)).revision == after.revision)
        }
        try? cluster.pgCtl(["-m", "immediate", "stop"])
    }
}
