import Foundation
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreStorage
@testable import TabStoreSupport

/// Three services on loopback sharing one PostgreSQL database, as replicas behind a load balancer would.
@Suite("Replicas on one PostgreSQL database", .serialized, .enabled(if: PostgresTestCluster.shared != nil, "no PostgreSQL binaries"))
struct ReplicaTests {
    /// Runs `body` with `count` live services on one fresh database, and stops them all.
    func withReplicas(_ count: Int, _ body: ([LiveService]) async throws -> Void) async throws {
        let url = try PostgresTestCluster.shared!.freshDatabase()
        var replicas: [LiveService] = []
        do {
            for _ in 0..<count { replicas.append(try LiveService(adjust: { $0.databaseURL = url; $0.databaseConnections = 4 })) }
            try await body(replicas)
        } catch {
            for replica in replicas { await replica.stop() }
            throw error
        }
        for replica in replicas { await replica.stop() }
    }

    @Test("concurrent PATCHes of one user spread over three replicas lose nothing; revisions are contiguous")
    func concurrentPatchesAcrossReplicas() async throws {
        try await withReplicas(3) { replicas in
            let tabs = 45
            let items = (0..<tabs).map { #"{"id": "t\#($0)", "title": "T\#($0)"}"# }.joined(separator: ",")
            let creds = try await Credentials.register(on: replicas[0], schema: #"{"items": [{"id": "keep", "title": "Keep"}, \#(items)]}"#)
            // Three writers at once, each sending every PATCH to the next replica in turn.
            let contended = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<3 {
                    group.addTask {
                        var retried = 0
                        for (turn, index) in stride(from: writer, to: tabs, by: 3).enumerated() {
                            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken).json("""
                                {"operations": [{"op": "setSidebarVisibility", "tab": "t\(index)", "visibility": "hidden"}]}
                                """)
                            var response = try await replicas[(writer + turn) % 3].send(patch)
                            // 503 write-contention tells the client to retry; anything else is a failure.
                            while response.status == 503 && retried < 50 {
                                retried += 1
                                response = try await replicas[(writer + turn + retried) % 3].send(patch)
                            }
                            #expect(response.status == 200, "\(response.status) \(response.text)")
                        }
                        return retried
                    }
                }
                return try await group.reduce(0, +)
            }
            for replica in replicas {
                let final = try await replica.send(.get(creds.customization).bearer(creds.userToken))
                #expect(final.field("revision") == .integer(tabs))
                guard case .object(let hidden)? = final.field("tabs") else { Issue.record("no tabs"); return }
                #expect(hidden.keys.count == tabs)
            }
            // Every revision from 1 to 45 is in the history exactly once, each a PATCH.
            let history = try await replicas[2].send(.get(creds.customization + "/history?limit=100").bearer(creds.userToken))
            guard case .array(let items)? = history.field("items") else { Issue.record("no history: \(history.text)"); return }
            let revisions = items.compactMap { item -> Int? in
                guard case .object(let object) = item, case .integer(let revision)? = object["revision"] else { return nil }
                return revision
            }
            #expect(revisions == Array((1...tabs).reversed()))
            _ = contended  // retries are allowed (the API asks for them); what matters is that nothing was lost
        }
    }

    @Test("an app and schema made on one replica serve on the others; a write on one is read on another")
    func sharedState() async throws {
        try await withReplicas(3) { replicas in
            let creds = try await Credentials.register(on: replicas[1], schema: Seeds.behaviorAllAutomatic)
            #expect(try await replicas[2].send(.get("/v1/apps/\(creds.app.id)/schema").bearer(creds.userToken)).status == 200)
            let put = try await replicas[0].send(.put(creds.customization).bearer(creds.userToken).json(#"{"tabs": {}}"#))
            #expect(put.status == 200)
            let read = try await replicas[2].send(.get(creds.customization).bearer(creds.userToken))
            #expect(read.status == 200 && read.field("revision") == put.field("revision"))
        }
    }
}
