import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// `Idempotency-Key` on PUT, PATCH, DELETE and revert (docs/devices.md "Write exactly once: Idempotency-Key").
@Suite("Exactly-once writes with Idempotency-Key", .serialized)
struct IdempotencyTests {
    @Test(
        "a sequential retry gets the first answer again with Idempotent-Replayed: true and changes nothing", arguments: PostgresTestCluster.backends)
    func sequentialRetry(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "offline-1").json(
                Sync.hide("climate"))
            let first = try await live.send(patch)
            #expect(first.status == 200 && first.revision == 1 && first.header("Idempotent-Replayed") == nil)
            // Another device changes the customization meanwhile: the retry still gets the first answer, not a merge.
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell"))).revision == 2)
            for _ in 0..<2 {
                let again = try await live.send(patch)
                #expect(again.status == 200 && again.body == first.body && again.etag == first.etag)
                #expect(again.header("Idempotent-Replayed") == "true")
                #expect(again.header("Content-Type") == "application/json")
            }
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).revision == 2)
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.metric("tabstore_idempotent_replays_total") == 2)
        }
    }

    @Test("a retry the write would now refuse (its If-Match is stale, its operation names a tab gone) is replayed, not refused",
          arguments: PostgresTestCluster.backends)
    func retryWouldNowBeRefused(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let first = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            let guarded = TestRequest.patch(creds.customization).bearer(creds.userToken).ifMatch(try #require(first.etag))
                .header("Idempotency-Key", "guarded-1").json(Sync.hide("bell"))
            let answer = try await live.send(guarded)
            #expect(answer.status == 200 && answer.revision == 2)
            // The first answer was lost; the retry carries the If-Match the first one already moved past.
            let again = try await live.send(guarded)
            #expect(again.status == 200 && again.body == answer.body && again.header("Idempotent-Replayed") == "true")
            // Without the key the same request is refused: the replay is what the key bought.
            let unkeyed = try await live.send(
                .patch(creds.customization).bearer(creds.userToken).ifMatch(try #require(first.etag)).json(Sync.hide("bell")))
            #expect(unkeyed.status == 412)
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).revision == 2)
        }
    }

    @Test("the same key with another method, path or body is 422 idempotency-key-reused and changes nothing", arguments: PostgresTestCluster.backends)
    func reusedKey(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let key = ("Idempotency-Key", "k-1")
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).headers([key]).json(Sync.hide("climate"))).status == 200)
            let reuses: [TestRequest] = [
                .patch(creds.customization).json(Sync.hide("bell")),
                .put(creds.customization).json(#"{"tabs": {}}"#),
                .delete(creds.customization),
                .post(creds.customization + "/revert").json(#"{"toRevision": 0}"#),
            ]
            for reuse in reuses {
                let answer = try await live.send(reuse.bearer(creds.userToken).headers([key]))
                #expect(answer.status == 422 && answer.problemType == "urn:tabstore:problem:idempotency-key-reused", "\(reuse.method)")
            }
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).revision == 1)
        }
    }

    @Test("the request is compared by its decoded path: another percent-encoding of the same path is the same request")
    func encodedPathIsTheSameRequest() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let key = ("Idempotency-Key", "encoded")
            let first = await api.send(
                .patch("/v1/apps/app.one/users/al%69ce/customization").bearer(api.admin).headers([key]).json(Sync.hide("climate")))
            #expect(first.status == 200 && first.revision == 1)
            for path in [creds.customization, "/v1/apps/app%2Eone/users/%61lice/customization"] {
                let again = await api.send(.patch(path).bearer(api.admin).headers([key]).json(Sync.hide("climate")))
                #expect(again.status == 200 && again.header("Idempotent-Replayed") == "true" && again.body == first.body, "\(path)")
            }
            // Another resource under the same user is another request.
            let revert = await api.send(.post(creds.customization + "/revert").bearer(api.admin).headers([key]).json(#"{"toRevision": 0}"#))
            #expect(revert.status == 422)
        }
    }

    @Test("the canonical path of an ordinarily encoded path is the path itself (answers stored before keep matching)")
    func canonicalPath() {
        #expect(IdempotentRequest.canonicalPath("/v1/apps/com.myApp/users/alice/customization") == "/v1/apps/com.myApp/users/alice/customization")
        #expect(IdempotentRequest.canonicalPath("/v1/apps/a/users/user%20one/customization") == "/v1/apps/a/users/user%20one/customization")
        #expect(IdempotentRequest.canonicalPath("/v1/apps/a/users/al%69ce/customization") == "/v1/apps/a/users/alice/customization")
        #expect(IdempotentRequest.canonicalPath("/v1/apps/a/users/caf%c3%a9/x") == "/v1/apps/a/users/caf%C3%A9/x")
        // An encoded slash stays one: it is part of the id, not a new segment.
        #expect(IdempotentRequest.canonicalPath("/v1/apps/a/users/a%2Fb/x") == "/v1/apps/a/users/a%2Fb/x")
        #expect(IdempotentRequest.canonicalPath("/v1/apps/a/users/a:b@c!$&'()*+,;=~/x") == "/v1/apps/a/users/a:b@c!$&'()*+,;=~/x")
    }

    @Test("keys are scoped to app and user: another user's identical key is a new request", arguments: PostgresTestCluster.backends)
    func keysAreScopedPerUser(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let key = ("Idempotency-Key", "same")
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).headers([key]).json(Sync.hide("climate"))).revision == 1)
            let other = creds.app.userPath(Credentials.otherUser) + "/customization"
            let mallory = try await live.send(.patch(other).bearer(creds.otherUserToken).headers([key]).json(Sync.hide("bell")))
            #expect(mallory.status == 200 && mallory.revision == 1 && mallory.header("Idempotent-Replayed") == nil)
        }
    }

    @Test("a malformed key is 400 invalid-idempotency-key before anything is stored",
          arguments: [[""], [String(repeating: "k", count: 256)], ["has space"], ["tab\tinside"], ["caf\u{E9}"], ["a", "b"]])
    func malformedKeys(_ values: [String]) async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let request = values.reduce(TestRequest.patch(creds.customization).bearer(creds.userToken)) { $0.header("Idempotency-Key", $1) }
            let answer = await api.send(request.json(Sync.hide("climate")))
            #expect(answer.status == 400 && answer.problemType == "urn:tabstore:problem:invalid-idempotency-key")
            #expect(await api.send(.get(creds.customization).bearer(creds.userToken)).revision == 0)
        }
    }

    @Test("255 visible ASCII characters are a valid key")
    func longestKey() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let key = String((0..<255).map { Character(UnicodeScalar(UInt8(0x21 + $0 % 94))) })
            let request = TestRequest.patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", key).json(Sync.hide("climate"))
            #expect(await api.send(request).status == 200)
            #expect(await api.send(request).header("Idempotent-Replayed") == "true")
        }
    }

    @Test("concurrent retries with one key apply once; every answer is the first", arguments: PostgresTestCluster.backends)
    func concurrentRetries(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "burst").json(Sync.hide("lights"))
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<12 { group.addTask { try await live.send(patch) } }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 200 && $0.revision == 1 && $0.body == answers[0].body && $0.etag == answers[0].etag })
            #expect(answers.filter { $0.header("Idempotent-Replayed") == nil }.count == 1)
            let history = try await live.send(.get(creds.customization + "/history").bearer(creds.userToken))
            #expect(history.field("items")?.items.count == 1)
        }
    }

    @Test("the answer survives a restart: a retry after it is replayed, not applied")
    func survivesRestart() async throws {
        let directory = TemporaryDirectory()
        let patch = { (creds: Credentials) in
            TestRequest.patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "before-restart").json(Sync.hide("bell"))
        }
        let (creds, first) = try await withLiveService(adjust: { $0.dataDirectory = directory.path }) { live in
            let creds = try await Credentials.register(on: live)
            return (creds, try await live.send(patch(creds)))
        }
        #expect(first.revision == 1)
        try await withLiveService(adjust: { $0.dataDirectory = directory.path }) { live in
            let again = try await live.send(patch(creds))
            #expect(again.status == 200 && again.body == first.body && again.header("Idempotent-Replayed") == "true")
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).revision == 1)
        }
    }

    @Test("DELETE and revert replay too; a write that changes nothing stores its answer all the same")
    func deleteRevertAndNoOp() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let user = creds.userToken
            _ = await api.send(.patch(creds.customization).bearer(user).json(Sync.hide("climate")))
            let delete = TestRequest.delete(creds.customization).bearer(user).header("Idempotency-Key", "del")
            #expect(await api.send(delete).status == 204)
            let replayed = await api.send(delete)
            #expect(replayed.status == 204 && replayed.header("Idempotent-Replayed") == "true" && replayed.body.isEmpty)
            let revert = TestRequest.post(creds.customization + "/revert").bearer(user).header("Idempotency-Key", "rev").json(#"{"toRevision": 1}"#)
            let reverted = await api.send(revert)
            #expect(reverted.revision == 3 && Sync.hidden(reverted) == ["com.myApp.climate"])
            #expect(await api.send(revert).header("Idempotent-Replayed") == "true")
            // Hiding what is hidden stores no revision, but its answer is kept: the retry sees revision 3 again.
            let noOp = TestRequest.patch(creds.customization).bearer(user).header("Idempotency-Key", "noop").json(Sync.hide("climate"))
            #expect(await api.send(noOp).revision == 3)
            _ = await api.send(.patch(creds.customization).bearer(user).json(Sync.hide("bell")))
            let noOpAgain = await api.send(noOp)
            #expect(noOpAgain.revision == 3 && noOpAgain.header("Idempotent-Replayed") == "true")
            #expect(await api.send(.get(creds.customization).bearer(user)).revision == 4)
        }
    }

    @Test("a keyed revert is replayed after the revision it named left the history; another request under its key is 422, not 404")
    func revertReplayedAfterRetention() async throws {
        try await withInProcessAPI(configure: { $0.historyRevisions = 3 }) { api in
            let creds = try await Credentials.register(on: api)
            let user = creds.userToken
            _ = await api.send(.patch(creds.customization).bearer(user).json(Sync.hide("climate")))
            _ = await api.send(.patch(creds.customization).bearer(user).json(Sync.hide("bell")))
            let revert = TestRequest.post(creds.customization + "/revert").bearer(user).header("Idempotency-Key", "undo-1").json(
                #"{"toRevision": 1}"#)
            let first = await api.send(revert)
            #expect(first.status == 200 && first.revision == 3)
            for tab in ["lights", "climate", "bell"] { _ = await api.send(.patch(creds.customization).bearer(user).json(Sync.hide(tab))) }
            let unkeyed = await api.send(.post(creds.customization + "/revert").bearer(user).json(#"{"toRevision": 1}"#))
            #expect(unkeyed.status == 404)
            let again = await api.send(revert)
            #expect(again.status == 200 && again.body == first.body && again.header("Idempotent-Replayed") == "true")
            let reused = await api.send(
                .post(creds.customization + "/revert").bearer(user).header("Idempotency-Key", "undo-1").json(#"{"toRevision": 99}"#))
            #expect(reused.status == 422 && reused.problemType == "urn:tabstore:problem:idempotency-key-reused")
        }
    }

    @Test("answers are kept 24 hours: a repeat a second before is replayed, one after is a new request")
    func expiry() async throws {
        let clock = TestClock()
        try await withInProcessAPI(configure: { $0.clock = { clock.now } }) { api in
            let creds = try await Credentials.register(on: api)
            // The operator's token: a user's would expire as the clock moves a day.
            let put = { (bell: String) in
                TestRequest.put(creds.customization).bearer(api.admin).header("Idempotency-Key", "day")
                    .json(#"{"tabs": {"com.myApp.bell": {"sidebarVisibility": "\#(bell)"}}}"#)
            }
            #expect(await api.send(put("hidden")).revision == 1)
            _ = await api.send(.patch(creds.customization).bearer(api.admin).json(Sync.visibility("bell", "visible")))
            clock.advance(86_400 - 1)
            #expect(await api.send(put("hidden")).header("Idempotent-Replayed") == "true")
            clock.advance(2)
            let fresh = await api.send(put("hidden"))
            #expect(fresh.status == 200 && fresh.revision == 3 && fresh.header("Idempotent-Replayed") == nil)
            // Expired, the key may carry another request.
            clock.advance(86_401)
            #expect(await api.send(put("visible")).revision == 4)
        }
    }

    @Test("an answer names its history row instead of a copy: replayed byte for byte after the retention passed it, gone once expired")
    func answerOutlivesRetention() async throws {
        let clock = TestClock()
        try await withInProcessAPI(configure: { $0.historyRevisions = 2; $0.clock = { clock.now } }) { api in
            let creds = try await Credentials.register(on: api)
            let first = TestRequest.patch(creds.customization).bearer(api.admin).header("Idempotency-Key", "first").json(Sync.hide("climate"))
            let answer = await api.send(first)
            #expect(answer.status == 200 && answer.revision == 1)
            // Past two housekeepings (revisions 16 and 32), far past the retention of 2.
            for index in 2...47 {
                _ = await api.send(.patch(creds.customization).bearer(api.admin).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            let history = await api.send(.get(creds.customization + "/history").bearer(api.admin))
            #expect(HistoryTests.revisions(history) == [47, 46])
            clock.advance(86_400 - 1)
            let replayed = await api.send(first)
            #expect(replayed.status == 200 && replayed.body == answer.body && replayed.etag == answer.etag)
            #expect(replayed.header("Idempotent-Replayed") == "true")
            // Expired, the answer goes at the next keyed housekeeping (revision 48), and the row it named with it.
            clock.advance(2)
            let next = await api.send(.patch(creds.customization).bearer(api.admin).header("Idempotency-Key", "next").json(Sync.hide("bell")))
            #expect(next.revision == 48)
            #expect(await api.send(.get("/metrics")).metric("tabstore_history_rows") == 2)
        }
    }

    @Test(
        "keyed writes past the retention: every row past it goes (an answer keeps its bytes), and every key still replays",
        arguments: PostgresTestCluster.backends)
    func keyedRowsPastTheRetentionGo(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend, adjust: { $0.historyRevisions = 2 }) { live in
            let creds = try await Credentials.register(on: live)
            var answers: [TestResponse] = []
            for index in 0..<40 {
                let body = Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")
                answers.append(
                    try await live.send(.patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "k-\(index)").json(body)))
                #expect(answers[index].revision == index + 1)
            }
            // PostgreSQL removes rows past the retention at every write, the embedded store at the 16th revision
            // (the 32nd here): at most 2 + 8 rows are left, never one an answer needs.
            let rows = try await live.send(.get("/metrics")).metric("tabstore_history_rows") ?? -1
            #expect(backend == .postgres ? rows == 2 : (2...10).contains(rows))
            #expect(HistoryTests.revisions(try await live.send(.get(creds.customization + "/history").bearer(creds.userToken))) == [40, 39])
            for index in 0..<40 {
                let body = Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")
                let retry = try await live.send(
                    .patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "k-\(index)").json(body))
                #expect(retry.header("Idempotent-Replayed") == "true" && retry.body == answers[index].body && retry.etag == answers[index].etag)
            }
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).revision == 40)
        }
    }

    @Test("an answer is stored as its revision's history row only when that row holds its exact bytes")
    func answerBodyByReference() {
        let document = Array(#"{"revision":7}"#.utf8)
        let record = CustomizationRecord(appId: "a", userId: "u", revision: 7, schemaVersion: 1, document: document, updatedAt: "t")
        let commit = { (body: [UInt8], history: Int, record: CustomizationRecord?) in
            CustomizationCommit(appId: "a", userId: "u", expectedRevision: 6, record: record, change: .patch, historyRevisions: history,
                                answer: IdempotentAnswer(key: "k", requestDigest: [1], status: 200, etag: nil, body: body, createdAt: 0))
        }
        #expect(StorePolicy.answerBodyRevision(commit(document, 100, record)) == 7)
        #expect(StorePolicy.answerBodyRevision(commit(document, 0, record)) == nil, "no history row is stored")
        #expect(StorePolicy.answerBodyRevision(commit(document + [0x20], 100, record)) == nil, "other bytes (reconciled answer)")
        #expect(StorePolicy.answerBodyRevision(commit(document, 100, nil)) == nil, "no revision (a keyed write that changes nothing)")
        #expect(StorePolicy.answerBodyRevision(commit([], 100, record)) == nil)
    }

    @Test("answers per user are bounded: at the user's housekeeping (every 16th revision) the oldest past the cap go")
    func boundedPerUser() async throws {
        let clock = TestClock()
        try await withInProcessAPI(configure: { $0.maxIdempotentAnswersPerUser = 3; $0.clock = { clock.now } }) { api in
            let creds = try await Credentials.register(on: api)
            let exportKeys = { () async -> Set<String> in
                let export = await api.send(.get(creds.app.userPath(Credentials.user) + "/export").bearer(api.admin))
                return Set(export.field("idempotencyKeys")?.items.compactMap { if case .string(let key)? = $0["key"] { key } else { nil } } ?? [])
            }
            for index in 0..<16 {
                let answer = await api.send(.patch(creds.customization).bearer(api.admin).header("Idempotency-Key", "key-\(index)")
                    .json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
                #expect(answer.revision == index + 1)
                if index == 14 { #expect(await exportKeys().count == 15, "at most the cap plus 15 between housekeepings") }
                clock.advance(1)
            }
            #expect(await exportKeys() == ["key-13", "key-14", "key-15"])
        }
    }

    @Test("past the cap the oldest-inserted answers go, whatever their keys sort as: a burst within one second keeps its recent keys")
    func evictsOldestInserted() async throws {
        let clock = TestClock()  // never advanced: the whole burst shares one created_at second
        try await withInProcessAPI(configure: { $0.maxIdempotentAnswersPerUser = 3; $0.clock = { clock.now } }) { api in
            let creds = try await Credentials.register(on: api)
            // `0-B` is the 15th of 16 keys, recent, and sorts before every other key.
            let keys = (0..<16).map { $0 == 14 ? "0-B" : "k-\($0)" }
            var answers: [String: TestResponse] = [:]
            var bellHidden = false
            for (index, key) in keys.enumerated() {
                if key != "0-B" { bellHidden.toggle() }
                let body = key == "0-B" ? Sync.hide("climate") : Sync.visibility("bell", bellHidden ? "hidden" : "visible")
                answers[key] = await api.send(.patch(creds.customization).bearer(api.admin).header("Idempotency-Key", key).json(body))
                #expect(answers[key]?.revision == index + 1)
            }
            let export = await api.send(.get(creds.app.userPath(Credentials.user) + "/export").bearer(api.admin))
            let kept = export.field("idempotencyKeys")?.items.compactMap { if case .string(let key)? = $0["key"] { key } else { nil } }
            #expect(kept == ["k-15", "0-B", "k-13"], "the last three inserted, newest first")
            // Another device shows the climate tab again; the retry of `0-B` (hide it) must not hide it a second time.
            #expect(await api.send(.patch(creds.customization).bearer(api.admin).json(Sync.visibility("climate", "visible"))).revision == 17)
            let retry = await api.send(.patch(creds.customization).bearer(api.admin).header("Idempotency-Key", "0-B").json(Sync.hide("climate")))
            #expect(retry.status == 200 && retry.header("Idempotent-Replayed") == "true" && retry.body == answers["0-B"]?.body)
            #expect(await api.send(.get(creds.customization).bearer(api.admin)).revision == 17)
        }
    }
}
