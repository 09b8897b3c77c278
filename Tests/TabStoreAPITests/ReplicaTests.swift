import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

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

    @Test("16 writers of one user over three replicas: every PATCH is applied at its first request, none refused for contention")
    func noContentionRefusals() async throws {
        try await withReplicas(3) { replicas in
            let writers = 16, each = 10
            let items = (0..<(writers * each)).map { #"{"id": "t\#($0)", "title": "T\#($0)"}"# }.joined(separator: ",")
            let creds = try await Credentials.register(on: replicas[0], schema: #"{"items": [{"id": "keep", "title": "Keep"}, \#(items)]}"#)
            let answers = try await withThrowingTaskGroup(of: [TestResponse].self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var seen: [TestResponse] = []
                        for turn in 0..<each {
                            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken).json("""
                                {"operations": [{"op": "setSidebarVisibility", "tab": "t\(writer * each + turn)", "visibility": "hidden"}]}
                                """)
                            seen.append(try await replicas[(writer + turn) % 3].send(patch))
                        }
                        return seen
                    }
                }
                return try await group.reduce(into: [TestResponse]()) { $0 += $1 }
            }
            // None is refused for contention. A machine loaded past the request's bound may answer 503
            // database-unavailable (the bound is the contract there, not a refusal of the write's turn): such a
            // write may or may not have committed, so the revision counts every 200 and at most those too.
            let applied = answers.filter { $0.status == 200 }.count
            let others = answers.filter { $0.status != 200 }.map { "\($0.status) \($0.problemType ?? "-")" }
            #expect(answers.count == writers * each && others.allSatisfy { $0 == "503 urn:tabstore:problem:database-unavailable" }, "\(others)")
            let final = try await replicas[1].send(.get(creds.customization).bearer(creds.userToken))
            guard case .integer(let revision)? = final.field("revision") else { Issue.record("no revision: \(final.text)"); return }
            #expect(revision >= applied && revision <= writers * each, "revision \(revision), \(applied) applied")
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

    /// Polls `check` every 20 ms for up to `seconds`; whether it became true.
    func within(_ seconds: Double, _ check: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await check() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await check()
    }

    @Test("a change-feed stream on one replica sees the PATCHes made through another, in order")
    func feedAcrossReplicas() async throws {
        try await withReplicas(2) { replicas in
            let creds = try await Credentials.register(on: replicas[0])
            let stream = try await replicas[0].follow(.get(FeedTests.events(creds)).bearer(creds.userToken))
            #expect(try await FeedTests.next(stream)?.id == "0.1")
            for (index, tab) in ["climate", "bell", "lights"].enumerated() {
                let write = try await replicas[1].send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide(tab)))
                #expect(write.status == 200)
                let event = try await FeedTests.next(stream)
                #expect(event?.id == "\(index + 1).1" && event?.data == write.text)
            }
        }
    }

    @Test("a secret rotated on one replica stops old tokens on the others within a second")
    func rotationAcrossReplicas() async throws {
        try await withReplicas(3) { replicas in
            let creds = try await Credentials.register(on: replicas[0])
            for replica in replicas {  // every replica has verified (and cached) the token
                #expect(try await replica.send(.get(creds.customization).bearer(creds.userToken)).status == 200)
            }
            #expect(try await replicas[0].send(.post("/v1/apps/app.one/signing-secret").bearer(replicas[0].admin)).status == 200)
            for replica in replicas[1...] {
                let refused = try await within(1) { try await replica.send(.get(creds.customization).bearer(creds.userToken)).status == 401 }
                #expect(refused)
            }
        }
    }

    @Test("a schema registered on one replica serves on the others at once; a deleted app is gone on all")
    func schemaAndDeletionAcrossReplicas() async throws {
        try await withReplicas(2) { replicas in
            let creds = try await Credentials.register(on: replicas[0])
            let path = "/v1/apps/app.one/schema"
            #expect(try await replicas[1].send(.get(path).bearer(creds.userToken)).field("version") == .integer(1))
            #expect(try await replicas[0].send(.put(path).bearer(replicas[0].admin).json(Seeds.apiExample)).status == 201)
            let served = try await within(1) { try await replicas[1].send(.get(path).bearer(creds.userToken)).field("version") == .integer(2) }
            #expect(served)
            #expect(try await replicas[0].send(.delete("/v1/apps/app.one").bearer(replicas[0].admin)).status == 204)
            let gone = try await within(1) { try await replicas[1].send(.get(path).bearer(replicas[1].admin)).status == 404 }
            #expect(gone)
        }
    }

    @Test("a secret rotated on one replica ends the user's stream on another (token-expired), not the operator's")
    func rotationEndsStreamsAcrossReplicas() async throws {
        try await withReplicas(2) { replicas in
            let creds = try await Credentials.register(on: replicas[0])
            let events = creds.customization + "/events"
            let userStream = try await replicas[1].follow(.get(events).bearer(creds.userToken))
            let operatorStream = try await replicas[1].follow(.get(events).bearer(replicas[1].admin))
            for stream in [userStream, operatorStream] { #expect(try await FeedTests.next(stream)?.id == "0.1") }
            #expect(try await replicas[0].send(.post("/v1/apps/app.one/signing-secret").bearer(replicas[0].admin)).status == 200)
            let ended = try await FeedTests.next(userStream, timeout: 30)
            #expect(ended?.event == "token-expired" && ended?.data?.contains("signing secret") == true)
            // The operator's stream goes on: it sees the next write, made through the first replica.
            #expect(try await replicas[0].send(.patch(creds.customization).bearer(replicas[0].admin).json(Sync.hide("bell"))).status == 200)
            #expect(try await FeedTests.next(operatorStream)?.id == "1.1")
        }
    }
}

extension ReplicaTests {
    @Test("a named operator token revoked on one replica ends the stream it opened on another")
    func revocationEndsStreamsAcrossReplicas() async throws {
        try await withReplicas(2) { replicas in
            let creds = try await Credentials.register(on: replicas[0])
            let created = try await replicas[0].send(.post("/v1/operator-tokens").bearer(replicas[0].admin).json(#"{"name": "ops-kim", "scope": "admin"}"#))
            guard case .string(let kim)? = created.field("token") else { Issue.record("no token: \(created.text)"); return }
            let stream = try await replicas[1].follow(.get(creds.customization + "/events").bearer(kim))
            #expect(try await FeedTests.next(stream)?.id == "0.1")
            #expect(try await replicas[0].send(.delete("/v1/operator-tokens/ops-kim").bearer(replicas[0].admin)).status == 204)
            let ended = try await FeedTests.next(stream, timeout: 30)
            #expect(ended?.event == "token-expired" && ended?.data?.contains("operator token was revoked") == true, "\(String(describing: ended))")
        }
    }
}
