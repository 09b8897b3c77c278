import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreSupport
import TabStoreTestSupport

/// `GET …/customization/history` and `POST …/customization/revert` (docs/devices.md "History and undo").
@Suite("History and undo", .serialized)
struct HistoryTests {
    /// The history page's revisions, newest first.
    static func revisions(_ page: TestResponse) -> [Int] { page.field("items")?.items.compactMap { $0["revision"]?.integer } ?? [] }

    @Test("a PATCH's operations show from the body kept as received, and from a list stored by an earlier version")
    func operationsFromEitherStoredForm() throws {
        let list = try JSONParser.parse(Array(#"[{"op":"setSidebarVisibility","tab":"a","visibility":"hidden"}]"#.utf8))
        let body = try JSONParser.parse(Array(#"{ "operations" : [ {"op":"setSidebarVisibility","tab":"a","visibility":"hidden"} ] }"#.utf8))
        #expect(ApplicationServices.operationList(body) == list)
        #expect(ApplicationServices.operationList(list) == list)
        #expect(ApplicationServices.operationList(.null) == .null)
    }

    @Test("a PATCH body over the stored size only by its whitespace keeps its operations, compacted")
    func paddedOperationsKept() async throws {
        try await withInProcessAPI(configure: { $0.maxCustomizationBytes = 4096 }) { api in
            let creds = try await Credentials.register(on: api)
            let operation = #"{"op":"setSidebarVisibility","tab":"com.myApp.climate","visibility":"hidden"}"#
            let padded = #"{"operations": ["# + String(repeating: " ", count: 5000) + operation + "]}"
            #expect(await api.send(.patch(creds.customization).bearer(api.admin).json(padded)).revision == 1)
            let history = await api.send(.get(creds.customization + "/history").bearer(api.admin))
            #expect(history.field("items")?.items.first?["operations"] == (try json("[" + operation + "]")))
        }
    }

    @Test("every revision is kept with its change kind, a PATCH's operations and the document; newest first", arguments: PostgresTestCluster.backends)
    func everyRevisionKept(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let user = creds.userToken
            _ = try await live.send(.put(creds.customization).bearer(user).json(#"{"tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}"#))
            _ = try await live.send(.patch(creds.customization).bearer(user).json(Sync.hide("climate")))
            _ = try await live.send(.delete(creds.customization).bearer(user))
            _ = try await live.send(.post(creds.customization + "/revert").bearer(user).json(#"{"toRevision": 2}"#))
            let page = try await live.send(.get(creds.customization + "/history").bearer(user))
            #expect(page.status == 200 && page.header("Cache-Control") == "no-store")
            let items = page.field("items")?.items ?? []
            #expect(Self.revisions(page) == [4, 3, 2, 1])
            #expect(items.map { $0["change"] } == [.string("revert"), .string("delete"), .string("patch"), .string("put")])
            #expect(items[2]["operations"] == (try json(#"[{"op":"setSidebarVisibility","tab":"com.myApp.climate","visibility":"hidden"}]"#)))
            #expect(items.allSatisfy { item in item["change"] == .string("patch") || item["operations"] == nil })
            #expect(
                items.map { Sync.hidden($0["customization"]) } == [
                    ["com.myApp.bell", "com.myApp.climate"], [], ["com.myApp.bell", "com.myApp.climate"], ["com.myApp.bell"],
                ])
            #expect(items.allSatisfy { $0["customization"]?["revision"] == $0["revision"] && $0["updatedAt"] != nil })
            #expect(page.field("nextBefore") == .null)
        }
    }

    @Test(
        "a DELETE of what is already forgotten changes nothing: no revision, history row or stored customization",
        arguments: PostgresTestCluster.backends)
    func deleteTwice(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let user = creds.userToken
            // Never written: nothing is stored, nothing is counted.
            for request in [
                TestRequest.delete(creds.customization).bearer(user), .delete(creds.customization).bearer(user).header("Idempotency-Key", "first"),
            ] {
                #expect(try await live.send(request).status == 204)
            }
            #expect(try await live.send(.get(creds.customization).bearer(user)).etag == "\"0.1\"")
            #expect(try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin)).field("storedCustomizations") == .integer(0))
            _ = try await live.send(.patch(creds.customization).bearer(user).json(Sync.hide("bell")))
            #expect(try await live.send(.delete(creds.customization).bearer(user)).status == 204)
            for request in [
                TestRequest.delete(creds.customization).bearer(user), .delete(creds.customization).bearer(user).header("Idempotency-Key", "again"),
            ] {
                #expect(try await live.send(request).status == 204)
            }
            let current = try await live.send(.get(creds.customization).bearer(user))
            #expect(current.etag == "\"2.1\"" && Sync.hidden(current) == [])
            #expect(Self.revisions(try await live.send(.get(creds.customization + "/history").bearer(user))) == [2, 1])
            #expect(try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin)).field("storedCustomizations") == .integer(1))
            // Something to forget again: the next DELETE is a revision.
            _ = try await live.send(.patch(creds.customization).bearer(user).json(Sync.hide("bell")))
            _ = try await live.send(.delete(creds.customization).bearer(user))
            #expect(try await live.send(.get(creds.customization).bearer(user)).etag == "\"4.1\"")
        }
    }

    @Test("a title changed only in its Unicode normalization is a change: a new revision storing the bytes sent")
    func titleBytes() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api, schema: Seeds.music)
            let path = creds.customization
            func list(_ title: String) -> String {
                #"{"operations":[{"op":"setDynamicTabs","section":"playlists","tabs":[{"id":"playlist.a","title":""# + title + #""}]}]}"#
            }
            let first = await api.send(.patch(path).bearer(creds.userToken).json(list("Cafe\\u0301")))
            let second = await api.send(.patch(path).bearer(creds.userToken).json(list("Caf\\u00e9")))
            #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
            #expect(second.revision == (first.revision ?? 0) + 1)
            #expect(second.text.contains("Caf\u{E9}"))
        }
    }

    @Test("pages: limit and before walk the history newest first; nextBefore is null on the last page")
    func paging() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            for index in 0..<7 {
                _ = await api.send(
                    .patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            let history = creds.customization + "/history"
            let first = await api.send(.get(history + "?limit=3").bearer(creds.userToken))
            #expect(Self.revisions(first) == [7, 6, 5] && first.field("nextBefore") == .integer(5))
            let second = await api.send(.get(history + "?limit=3&before=5").bearer(creds.userToken))
            #expect(Self.revisions(second) == [4, 3, 2] && second.field("nextBefore") == .integer(2))
            let last = await api.send(.get(history + "?limit=3&before=2").bearer(creds.userToken))
            #expect(Self.revisions(last) == [1] && last.field("nextBefore") == .null)
            let exact = await api.send(.get(history + "?limit=7").bearer(creds.userToken))
            #expect(Self.revisions(exact).count == 7 && exact.field("nextBefore") == .null)
            #expect(Self.revisions(await api.send(.get(history).bearer(creds.userToken))).count == 7, "default limit 20")
        }
    }

    @Test("a page stops past 1 MiB of documents (at least one revision), and nextBefore goes on from there")
    func pageByteCap() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api, schema: Seeds.apiExample)
            // ~57 KB documents: 550 dynamic playlist tabs hidden, one more each time so every PUT is a revision.
            for revision in 1...25 {
                let entries = (0..<(550 + revision)).map {
                    #""com.myApp.playlist.\#(String(repeating: "x", count: 16))-\#($0)": {"sidebarVisibility": "hidden"}"#
                }
                let put = await api.send(.put(creds.customization).bearer(creds.userToken).json("{\"tabs\": {\(entries.joined(separator: ","))}}"))
                #expect(put.status == 200 && put.revision == revision)
            }
            let first = await api.send(.get(creds.customization + "/history?limit=25").bearer(creds.userToken))
            let listed = Self.revisions(first)
            #expect(first.body.count <= ApplicationServices.maxHistoryPageBytes + 64 * 1024)
            #expect(listed.count > 1 && listed.count < 25 && listed.first == 25 && first.field("nextBefore") == .integer(listed.last!))
            let rest = await api.send(.get(creds.customization + "/history?limit=25&before=\(listed.last!)").bearer(creds.userToken))
            #expect(Self.revisions(rest).first == listed.last! - 1)
        }
    }

    @Test(
        "bad limits and cursors are 400 invalid-parameter",
        arguments: ["limit=0", "limit=101", "limit=x", "before=0", "before=-1", "before=", "limit="])
    func badParameters(_ query: String) async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let answer = await api.send(.get(creds.customization + "/history?" + query).bearer(creds.userToken))
            #expect(answer.status == 400 && answer.problemType == "urn:tabstore:problem:invalid-parameter")
        }
    }

    @Test("a query parameter given twice could be read two ways: 400 invalid-parameter naming it, on every route; distinct names pass")
    func repeatedParameters() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let user = creds.userToken
            let layout = creds.customization.replacingOccurrences(of: "/customization", with: "/layout")
            for target in [creds.customization + "/history?limit=1&limit=2", creds.customization + "/history?limit=1&%6Cimit=1",
                           creds.customization + "/history?before=5&limit=2&before=5", layout + "?sizeClass=compact&sizeClass=regular",
                           creds.customization + "/history?" + (0..<20).map { "p\($0)=1" }.joined(separator: "&") + "&p3=2"] {
                let answer = await api.send(.get(target).bearer(user))
                #expect(answer.status == 400 && answer.problemType == "urn:tabstore:problem:invalid-parameter", "\(target)")
            }
            let named = await api.send(.get(creds.customization + "/history?limit=1&limit=2").bearer(user))
            #expect(named.field("detail") == .string("the query parameter \"limit\" is given more than once"))
            // Bytes: "limit" and "Limit" are two names (the second is not one the route reads); so are twenty distinct ones.
            #expect(await api.send(.get(creds.customization + "/history?limit=1&Limit=2").bearer(user)).status == 200)
            #expect(
                await api.send(.get(creds.customization + "/history?" + (0..<20).map { "p\($0)=1" }.joined(separator: "&")).bearer(user)).status
                    == 200)
            #expect(await api.send(.get(layout + "?sizeClass=compact").bearer(user)).status == 200)
        }
    }

    @Test(
        "retention keeps the last N revisions; an older one is 404 revision-not-found; /metrics counts the rows stored",
        arguments: PostgresTestCluster.backends)
    func retention(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend, adjust: { $0.historyRevisions = 3 }) { live in
            let creds = try await Credentials.register(on: live)
            for index in 0..<5 {
                _ = try await live.send(
                    .patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            #expect(Self.revisions(try await live.send(.get(creds.customization + "/history").bearer(creds.userToken))) == [5, 4, 3])
            let gone = try await live.send(.post(creds.customization + "/revert").bearer(creds.userToken).json(#"{"toRevision": 2}"#))
            #expect(gone.status == 404 && gone.problemType == "urn:tabstore:problem:revision-not-found")
            #expect(try await live.send(.post(creds.customization + "/revert").bearer(creds.userToken).json(#"{"toRevision": 9}"#)).status == 404)
            // Rows past the retention: PostgreSQL removes them at every write; the embedded store at the user's
            // next housekeeping (every 16th revision), and never lists them again, even if the retention is raised.
            #expect(try await live.send(.get("/metrics")).metric("tabstore_history_rows") == (backend == .postgres ? 3 : 5))
            for index in 5..<16 {
                _ = try await live.send(
                    .patch(creds.customization).bearer(creds.userToken).json(Sync.visibility("bell", index % 2 == 0 ? "hidden" : "visible")))
            }
            #expect(try await live.send(.get("/metrics")).metric("tabstore_history_rows") == 3)
            #expect(Self.revisions(try await live.send(.get(creds.customization + "/history").bearer(creds.userToken))) == [16, 15, 14])
        }
    }

    @Test("with --history-revisions 0 nothing is kept, and revert reaches only revision 0")
    func noHistory() async throws {
        try await withInProcessAPI(configure: { $0.historyRevisions = 0 }) { api in
            let creds = try await Credentials.register(on: api)
            _ = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            #expect(Self.revisions(await api.send(.get(creds.customization + "/history").bearer(creds.userToken))) == [])
            #expect(await api.send(.post(creds.customization + "/revert").bearer(creds.userToken).json(#"{"toRevision": 1}"#)).status == 404)
            let reset = await api.send(.post(creds.customization + "/revert").bearer(creds.userToken).json(#"{"toRevision": 0}"#))
            #expect(reset.status == 200 && reset.revision == 2 && Sync.hidden(reset) == [])
        }
    }

    @Test("revert makes a new revision with the old choices, and reverting the revert undoes it", arguments: PostgresTestCluster.backends)
    func revertAndUndo(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let user = creds.userToken
            let revert = TestRequest.post(creds.customization + "/revert").bearer(user)
            _ = try await live.send(.patch(creds.customization).bearer(user).json(Sync.hide("climate")))
            let second = try await live.send(.patch(creds.customization).bearer(user).json(Sync.hide("bell")))
            let undo = try await live.send(revert.json(#"{"toRevision": 1}"#))
            #expect(undo.status == 200 && undo.revision == 3 && undo.etag == "\"3.1\"" && Sync.hidden(undo) == ["com.myApp.climate"])
            let redo = try await live.send(revert.json(#"{"toRevision": 2}"#))
            #expect(redo.revision == 4 && Sync.hidden(redo) == Sync.hidden(second))
            #expect(Sync.hidden(try await live.send(.get(creds.customization).bearer(user))) == ["com.myApp.bell", "com.myApp.climate"])
            // Reverting to what is current changes nothing: no new revision.
            #expect(try await live.send(revert.json(#"{"toRevision": 4}"#)).revision == 4)
            let empty = try await live.send(revert.json(#"{"toRevision": 0}"#))
            #expect(empty.revision == 5 && Sync.hidden(empty) == [])
        }
    }

    @Test("revert honours If-Match: a stale tag is 412 and nothing changes")
    func revertIfMatch() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let first = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            _ = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            let stale = await api.send(
                .post(creds.customization + "/revert").bearer(creds.userToken).ifMatch(first.etag!).json(#"{"toRevision": 1}"#))
            #expect(stale.status == 412 && stale.etag == "\"2.1\"")
            let current = await api.send(
                .post(creds.customization + "/revert").bearer(creds.userToken).ifMatch("\"2.1\"").json(#"{"toRevision": 1}"#))
            #expect(current.status == 200 && current.revision == 3)
        }
    }

    @Test("revert reconciles with the current schema: choices for tabs it removed are gone", arguments: PostgresTestCluster.backends)
    func revertReconciles(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            let withoutClimate = Seeds.behaviorAllAutomatic.replacing(
                #"{"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},"#, with: "")
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(withoutClimate)).status == 201)
            let reverted = try await live.send(.post(creds.customization + "/revert").bearer(creds.userToken).json(#"{"toRevision": 1}"#))
            #expect(reverted.status == 200 && reverted.revision == 3 && reverted.etag == "\"3.2\"")
            #expect(reverted.field("schemaVersion") == .integer(2) && Sync.hidden(reverted) == [])
        }
    }

    @Test(
        "malformed revert bodies are 400",
        arguments: [#"{}"#, #"{"toRevision": -1}"#, #"{"toRevision": "1"}"#, #"{"toRevision": 1.5}"#, #"{"toRevision": 1, "x": 1}"#, #"[]"#])
    func malformedRevert(_ body: String) async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            #expect(await api.send(.post(creds.customization + "/revert").bearer(creds.userToken).json(body)).status == 400)
        }
    }

    @Test("another user is refused history and revert (403); the operator may read both", arguments: PostgresTestCluster.backends)
    func anotherUserRefused(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            _ = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("climate")))
            for token in [creds.otherUserToken, creds.otherAppToken] {
                #expect(try await live.send(.get(creds.customization + "/history").bearer(token)).status == 403)
                #expect(try await live.send(.post(creds.customization + "/revert").bearer(token).json(#"{"toRevision": 0}"#)).status == 403)
            }
            #expect(Self.revisions(try await live.send(.get(creds.customization + "/history").bearer(live.admin))) == [1])
        }
    }
}
