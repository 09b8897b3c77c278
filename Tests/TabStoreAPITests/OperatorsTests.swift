import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreSupport
import TabStoreTestSupport

/// Operators v2 (docs/api.md "Additions in v1.2"): the per-user dry run and the users of an app, on each backend.
@Suite("Operators: dry run per user, users of an app", .serialized)
struct OperatorsTests {
    typealias V = AppVersionsTests

    /// v2 with only a title changed (News → Headlines).
    static let v2Retitled = V.v2.replacingOccurrences(of: #""title": "News""#, with: #""title": "Headlines""#)
    /// v2 without News.
    static let v2WithoutNews = V.v2.replacingOccurrences(
        of: #"{"kind": "tab", "id": "com.myApp.news", "title": "News", "systemImage": "newspaper"},"#, with: "")

    @Test("the dry run compares what is served now with what would be served: no-op changes count 0, a removal lists exactly its users",
          arguments: PostgresTestCluster.backends)
    func dryRunPerUser(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let admin = live.admin
            // Under v1: bob hides Alerts (v2 drops it), carol and dave hide News, erin reorders More.
            for (user, ops) in [("bob", V.hide("bell")), ("carol", V.hide("news")), ("dave", V.hide("news") + "," + V.hide("home")),
                                ("erin", #"{"op": "setTabOrder", "section": "com.myApp.more", "tabOrder": ["com.myApp.d", "com.myApp.a", "com.myApp.b"]}"#)] {
                let answer = try await live.send(.patch(app.userPath(user) + "/customization").bearer(admin).json(V.patch(ops)))
                #expect(answer.status == 200, "\(user): \(answer.text)")
            }
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema").bearer(admin).json(V.v2)).status == 201)
            // Bob's stored document still names Alerts, but he is served v2 without it: a title-only v3 changes nothing.
            let retitled = try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true").bearer(admin).json(Self.v2Retitled))
            #expect(retitled.status == 200 && retitled.field("customizationsChecked") == .integer(4))
            #expect(retitled.field("customizationsAffected") == .integer(0) && retitled.ids("droppedIds") == [], "\(retitled.text)")
            #expect(retitled.text.contains(#""affectedUsers":[],"affectedUsersNext":null"#))
            // Dropping News changes carol's and dave's choices, nobody else's.
            let removal = try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true").bearer(admin).json(Self.v2WithoutNews))
            #expect(removal.field("customizationsAffected") == .integer(2) && removal.ids("droppedIds") == ["com.myApp.news"], "\(removal.text)")
            #expect(removal.text.contains(
                #""affectedUsers":[{"userId":"carol","droppedIds":["com.myApp.news"],"visibilityReset":[],"ordersChanged":[],"#
                    + #""tabBarOrderChanged":false,"dynamicTabsDropped":0},{"userId":"dave""#), "\(removal.text)")
            // Paged in byte order.
            let first = try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true&limit=1").bearer(admin).json(Self.v2WithoutNews))
            #expect(first.field("affectedUsersNext") == .string("carol") && !first.text.contains(#""dave""#))
            let second = try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true&limit=1&after=carol").bearer(admin).json(Self.v2WithoutNews))
            #expect(second.text.contains(#""userId":"dave""#) && second.field("affectedUsersNext") == .null)
            for query in ["limit=0", "limit=101", "limit=x", "after=", "after=" + String(repeating: "a", count: 257)] {
                let bad = try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true&" + query).bearer(admin).json(Self.v2WithoutNews))
                #expect(bad.status == 400 && bad.header("Content-Type") == "application/problem+json", "\(query)")
            }
            #expect(try await live.send(.get("/v1/apps/com.myApp/schema").bearer(admin)).text.contains("com.myApp.news"), "stored nothing")
        }
    }

    @Test("users of an app: byte order, prefix and after as bytes, paging, bounds, operator only", arguments: PostgresTestCluster.backends)
    func usersOfAnApp(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let admin = live.admin
            // Precomposed and decomposed "café" are two users; "b%" and "b_" are not patterns.
            let users = ["alice", "bob", "b%25x", "b_y", "caf%C3%A9", "cafe%CC%81", "carol"]
            for user in users {
                let answer = try await live.send(.patch(app.userPath(user) + "/customization").bearer(admin).json(V.patch(V.hide("bell"))))
                #expect(answer.status == 200, "\(user)")
            }
            let all = try await live.send(.get("/v1/apps/com.myApp/users").bearer(admin))
            #expect(all.status == 200 && all.field("next") == .null)
            let ids = Self.userIds(all)
            #expect(ids == ["alice", "b%x", "b_y", "bob", "cafe\u{301}", "caf\u{E9}", "carol"].sorted { Identifier($0) < Identifier($1) })
            #expect(ids.count == 7, "canonically equivalent ids stay two users")
            #expect(all.text.contains(#"{"userId":"alice","revision":1,"schemaVersion":1,"updatedAt":""#))
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=b%25").bearer(admin))) == ["b%x"])
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=b_").bearer(admin))) == ["b_y"])
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=caf%C3%A9").bearer(admin))) == ["caf\u{E9}"])
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=zz").bearer(admin))) == [])
            // Paging: two at a time, then the rest; `after` below the prefix starts at the prefix.
            var seen: [String] = []
            var after: String?
            for _ in 0..<10 {
                let query = after.map { "&after=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
                let page = try await live.send(.get("/v1/apps/com.myApp/users?limit=2" + query).bearer(admin))
                seen += Self.userIds(page)
                guard case .string(let next)? = page.field("next") else { break }
                after = next
            }
            #expect(seen == ids)
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=c&after=a").bearer(admin))).count == 3)
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=c&after=caf").bearer(admin))).count == 3)
            #expect(Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users?prefix=b&after=bob").bearer(admin))) == [])
            for query in ["limit=0", "limit=101", "limit=-1", "limit=99999999999999999999", "after=",
                          "prefix=" + String(repeating: "a", count: 257), "after=" + String(repeating: "a", count: 300), "prefix=%01"] {
                let bad = try await live.send(.get("/v1/apps/com.myApp/users?" + query).bearer(admin))
                #expect(bad.status == 400 && bad.header("Content-Type") == "application/problem+json", "\(query.prefix(40)): \(bad.status)")
            }
            #expect(try await live.send(.get("/v1/apps/com.myApp/users").bearer(app.token(for: "alice"))).status == 403)
            #expect(try await live.send(.get("/v1/apps/com.nope/users").bearer(admin)).status == 404)
            // Erased: no longer listed.
            #expect(try await live.send(.delete(app.userPath("alice")).bearer(admin)).status == 204)
            #expect(!Self.userIds(try await live.send(.get("/v1/apps/com.myApp/users").bearer(admin))).contains("alice"))
        }
    }

    static func userIds(_ response: TestResponse) -> [String] {
        guard case .array(let items)? = response.field("items") else { return [] }
        return items.compactMap { if case .object(let item) = $0, case .string(let id)? = item["userId"] { id } else { nil } }
    }
}

extension OperatorsTests {
    @Test("history explains: actors, a revert's target, and the schema entry when a version drops a user's choice",
          arguments: PostgresTestCluster.backends)
    func historyExplains(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let bob = app.userPath("bob") + "/customization"
            // r1 by bob himself, r2 by the operator, r3 a revert to 1 by the operator.
            #expect(try await live.send(.patch(bob).bearer(app.token(for: "bob")).json(V.patch(V.hide("bell")))).status == 200)
            #expect(try await live.send(.patch(bob).bearer(live.admin).json(V.patch(V.hide("news")))).status == 200)
            #expect(try await live.send(.post(bob + "/revert").bearer(live.admin).json(#"{"toRevision": 1}"#)).status == 200)
            let before = try await live.send(.get(bob + "/history").bearer(live.admin))
            #expect(before.text.contains(#""revision":3,"#) && before.text.contains(#""change":"revert","actor":{"kind":"operator","name":"bootstrap"},"toRevision":1"#),
                    "\(before.text)")
            #expect(before.text.contains(#""change":"patch","actor":{"kind":"user","name":"bob"}"#))
            #expect(!before.text.contains(#""change":"schema""#))
            // v2 drops Alerts: bob's history says so first, naming the version and the id.
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema").bearer(live.admin).json(V.v2)).status == 201)
            let after = try await live.send(.get(bob + "/history").bearer(app.token(for: "bob")))
            #expect(after.text.contains(#"{"revision":3,"#) && after.text.contains(#""change":"schema","#), "\(after.text)")
            #expect(after.text.contains(#""schemaVersion":2,"dropped":["com.myApp.bell"]"#), "\(after.text)")
            // The next write stores the reconciled choices: the entry is no longer derived.
            #expect(try await live.send(.patch(bob).bearer(app.token(for: "bob")).json(V.patch(V.hide("garden")))).status == 200)
            #expect(!(try await live.send(.get(bob + "/history").bearer(live.admin))).text.contains(#""change":"schema""#))
        }
    }
}

extension OperatorsTests {
    @Test("named operator tokens: read scope reads but never writes, revoked at once, bootstrap stays, names bounded",
          arguments: PostgresTestCluster.backends)
    func operatorTokens(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            _ = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let created = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "support-alex", "scope": "read"}"#))
            #expect(created.status == 201 && created.header("Cache-Control") == "no-store", "\(created.text)")
            guard case .string(let readToken)? = created.field("token") else { Issue.record("no token"); return }
            // Reads: allowed. Writes: 403 with a clear problem, and nothing rotated.
            #expect(try await live.send(.get("/v1/apps").bearer(readToken)).status == 200)
            #expect(try await live.send(.get("/v1/apps/com.myApp/users").bearer(readToken)).status == 200)
            let rotate = try await live.send(.post("/v1/apps/com.myApp/signing-secret").bearer(readToken))
            #expect(rotate.status == 403 && rotate.text.contains("read scope"), "\(rotate.text)")
            #expect(try await live.send(.post("/v1/operator-tokens").bearer(readToken).json(#"{"name": "x", "scope": "admin"}"#)).status == 403)
            #expect(try await live.send(.delete("/v1/apps/com.myApp").bearer(readToken)).status == 403)
            // An admin token writes, and its name is the actor of what it writes.
            let admin = try await live.send(.post("/v1/operator-tokens").bearer(live.admin)
                .json(#"{"name": "ops-kim", "scope": "admin", "expiresAt": "2099-01-01T00:00:00Z"}"#))
            guard case .string(let adminToken)? = admin.field("token") else { Issue.record("no token: \(admin.text)"); return }
            #expect(try await live.send(.post("/v1/apps/com.myApp/signing-secret").bearer(adminToken)).status == 200)
            let path = "/v1/apps/com.myApp/users/bob/customization"
            #expect(try await live.send(.patch(path).bearer(adminToken).json(V.patch(V.hide("bell")))).status == 200)
            #expect(try await live.send(.get(path + "/history").bearer(readToken)).text.contains(#""actor":{"kind":"operator","name":"ops-kim"}"#))
            // Listed without the token or its digest.
            let list = try await live.send(.get("/v1/operator-tokens").bearer(readToken))
            #expect(list.status == 200 && list.text.contains(#""name":"ops-kim","scope":"admin""#) && list.text.contains(#""expiresAt":"2099-01-01T00:00:00Z""#))
            #expect(!list.text.contains(readToken) && !list.text.contains(adminToken))
            // Revoked: refused at the next request.
            #expect(try await live.send(.delete("/v1/operator-tokens/support-alex").bearer(adminToken)).status == 204)
            #expect(try await live.send(.get("/v1/apps").bearer(readToken)).status == 401)
            #expect(try await live.send(.delete("/v1/operator-tokens/support-alex").bearer(adminToken)).status == 404)
            // The bootstrap token stays; names are bounded and unique; bad bodies are problems.
            #expect(try await live.send(.get("/v1/apps").bearer(live.admin)).status == 200)
            for body in [#"{"name": "bootstrap", "scope": "read"}"#, #"{"name": "\#(String(repeating: "a", count: 65))", "scope": "read"}"#,
                         #"{"name": "a b", "scope": "read"}"#, #"{"name": "ok", "scope": "root"}"#,
                         #"{"name": "ok", "scope": "read", "expiresAt": "2001-01-01T00:00:00Z"}"#,
                         #"{"name": "ok", "scope": "read", "expiresAt": "soon"}"#] {
                let bad = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(body))
                #expect(bad.status == 422 && bad.header("Content-Type") == "application/problem+json", "\(body): \(bad.status)")
            }
            #expect(try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "ops-kim", "scope": "read"}"#)).status == 409)
            #expect(try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"scope": "read"}"#)).status == 400)
            #expect(try await live.send(.get("/v1/apps").bearer(String(repeating: "x", count: 5000))).status == 401)
            #expect(try await live.send(.get("/v1/operator-tokens").bearer(Credentials.App.register(on: live, id: "com.b", schema: V.v1).token(for: "u")))
                .status == 403)
        }
    }
}

extension OperatorsTests {
    @Test("the audit log: operator writes and exports with actor, ids, request id and status, newest first, filtered, paged, bounded",
          arguments: PostgresTestCluster.backends)
    func auditLog(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend, adjust: { $0.auditRetention = 5 }) { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let created = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "ops-kim", "scope": "admin"}"#))
            guard case .string(let kim)? = created.field("token") else { Issue.record("no token"); return }
            let rotated = try await live.send(.post("/v1/apps/com.myApp/signing-secret").bearer(kim))
            #expect(rotated.status == 200)
            // A user's own write and an operator's read are not operator writes.
            _ = try await live.send(.get("/v1/apps").bearer(kim))
            let audit = try await live.send(.get("/v1/audit?app=com.myApp").bearer(kim))
            #expect(audit.status == 200)
            #expect(audit.text.contains(#""actor":"ops-kim","action":"POST /v1/apps/{appId}/signing-secret","appId":"com.myApp","requestId":""#),
                    "\(audit.text)")
            #expect(audit.text.contains(#""status":200"#) && !audit.text.contains("GET /v1/apps\""))
            #expect(try await live.send(.get("/v1/audit?actor=bootstrap").bearer(kim)).text.contains(#""action":"POST /v1/operator-tokens""#))
            #expect(try await live.send(.get("/v1/audit?actor=nobody").bearer(kim)).text.contains(#""items":[]"#))
            _ = try await live.send(.get(app.userPath("bob") + "/export").bearer(kim))
            let newest = try await live.send(.get("/v1/audit?limit=1").bearer(kim))
            #expect(newest.text.contains(#""action":"GET /v1/apps/{appId}/users/{userId}/export","appId":"com.myApp","userId":"bob""#), "\(newest.text)")
            guard case .integer(let next)? = newest.field("next") else { Issue.record("no next: \(newest.text)"); return }
            #expect(try await live.send(.get("/v1/audit?limit=1&before=\(next)").bearer(kim)).text.contains("signing-secret"))
            // Bounded: at most `auditRetention` entries are kept.
            for _ in 0..<8 { _ = try await live.send(.post("/v1/apps/com.myApp/signing-secret").bearer(kim)) }
            guard case .array(let items)? = try await live.send(.get("/v1/audit?limit=100").bearer(kim)).field("items") else { return }
            #expect(items.count == 5)
            for query in ["limit=0", "limit=101", "before=0", "app=%20", "actor=a%20b"] {
                #expect(try await live.send(.get("/v1/audit?" + query).bearer(kim)).status == 400, "\(query)")
            }
            // (bob's token for com.myApp died with its secret's rotations: a user of another app.)
            let other = try await Credentials.App.register(on: live, id: "com.other", schema: V.v1)
            #expect(try await live.send(.get("/v1/audit").bearer(other.token(for: "bob"))).status == 403)
        }
    }
}

extension OperatorsTests {
    @Test("revoking a named operator token ends the streams (token-expired) and long polls (401) it opened; other tokens' go on",
          arguments: PostgresTestCluster.backends)
    func revocationEndsFollowers(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let created = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "support-alex", "scope": "read"}"#))
            guard case .string(let alex)? = created.field("token") else { Issue.record("no token: \(created.text)"); return }
            let events = creds.customization + "/events"
            let revoked = try await live.follow(.get(events).bearer(alex))
            let bootstrap = try await live.follow(.get(events).bearer(live.admin))
            for stream in [revoked, bootstrap] { #expect(try await FeedTests.next(stream)?.id == "0.1") }
            let poll = Task { try await live.send(.get(creds.customization + "?waitSeconds=60").bearer(alex).ifNoneMatch("\"0.1\"")) }
            try await waitUntil { live.service.api.followers.longPolls == 1 }
            #expect(try await live.send(.delete("/v1/operator-tokens/support-alex").bearer(live.admin)).status == 204)
            let answer = try await poll.value
            #expect(answer.status == 401 && answer.text.contains("operator token was revoked"), "\(answer.status) \(answer.text)")
            let ended = try await FeedTests.next(revoked)
            #expect(ended?.event == "token-expired" && ended?.data?.contains("operator token was revoked") == true, "\(String(describing: ended))")
            #expect(try await offPool { revoked.closesWithin(30) })
            // The configured token's stream goes on.
            #expect(try await live.send(.patch(creds.customization).bearer(live.admin).json(Sync.hide("bell"))).status == 200)
            #expect(try await FeedTests.next(bootstrap)?.id == "1.1")
            // And the revoked token opens nothing new.
            #expect(try await live.send(.get(events).bearer(alex)).status == 401)
        }
    }

    @Test("a named operator token's expiry ends the stream it opened (token-expired)")
    func expiryEndsStream() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            // Expires in five to six seconds (the API takes whole seconds): time enough to open the stream on a loaded machine.
            let expires = Timestamp.format(Date(timeIntervalSince1970: Double(Int(Date().timeIntervalSince1970) + 6)))
            let created = try await live.send(.post("/v1/operator-tokens").bearer(live.admin)
                .json(#"{"name": "short-lived", "scope": "read", "expiresAt": "\#(expires)"}"#))
            guard case .string(let token)? = created.field("token") else { Issue.record("no token: \(created.text)"); return }
            let stream = try await live.follow(.get(creds.customization + "/events").bearer(token))
            #expect(try await FeedTests.next(stream)?.id == "0.1")
            let ended = try await FeedTests.next(stream, timeout: 60)
            #expect(ended?.event == "token-expired", "\(String(describing: ended))")
            #expect(try await offPool { stream.closesWithin(30) })
        }
    }
}

extension OperatorsTests {
    @Test("a page's before may be any positive integer: one past every stored number reads from the newest; 0 and non-digits are 400")
    func beforeOfAnySize() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell"))).status == 200)
            _ = try await live.send(.post("/v1/apps/app.one/signing-secret").bearer(live.admin))
            let huge = "85556310469807226091399431786313285632"
            for path in ["/v1/audit", creds.customization + "/history"] {
                let all = try await live.send(.get(path).bearer(live.admin))
                let bounded = try await live.send(.get(path + "?before=" + huge).bearer(live.admin))
                #expect(all.status == 200 && bounded.status == 200 && bounded.field("items") == all.field("items"), "\(path): \(bounded.text)")
                for bad in ["0", "000", "-1", "1e3", "%20"] {
                    let refused = try await live.send(.get(path + "?before=" + bad).bearer(live.admin))
                    #expect(refused.status == 400 && refused.problemType == "urn:tabstore:problem:invalid-parameter", "\(path) before=\(bad)")
                }
            }
        }
    }
}
