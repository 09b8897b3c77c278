import Foundation
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

@Suite("REST API end to end (real server, real sockets, real SQLite)", .serialized)
struct APITests {
    @Test("seed 000 through the API: register, hide, 422 on a disabled tab, move, reset, layout in both size classes")
    func seedWalkthrough() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("com.myApp", schema: Seeds.apiExample)
            let alice = live.userToken(app: "com.myApp", user: "alice", secret: secret)
            let base = "/v1/apps/com.myApp/users/alice"

            let empty = try await live.call("GET", base + "/customization", token: alice)
            #expect(empty.status == 200)
            #expect(empty.field("revision") == .integer(0))
            #expect(empty.headers["ETag"] == "\"0.1\"")
            #expect(empty.headers["Cache-Control"] == "private, no-cache")

            let hidden = try await live.call("PATCH", base + "/customization", token: alice, json: """
                {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.climate", "visibility": "hidden"},
                                {"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 0}]}
                """)
            #expect(hidden.status == 200)
            #expect(hidden.headers["ETag"] == "\"1.1\"")

            let refused = try await live.call("PATCH", base + "/customization", token: alice, json: """
                {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.home", "visibility": "hidden"}]}
                """)
            #expect(refused.status == 422)
            #expect(refused.headers["Content-Type"] == "application/problem+json")
            #expect(refused.codes == ["not-hideable"])

            let regular = try await live.call("GET", base + "/layout?sizeClass=regular", token: alice)
            #expect(regular.status == 200)
            #expect(regular.ids("hidden") == ["com.myApp.climate"])
            #expect(regular.ids("pinned") == ["com.myApp.search"])
            #expect(regular.ids("sidebar") == ["com.myApp.home", "com.myApp.categories", "com.myApp.playlists"])
            let compact = try await live.call("GET", base + "/layout?sizeClass=compact", token: alice)
            #expect(compact.ids("sidebar").isEmpty)
            #expect(compact.ids("tabBar") == ["com.myApp.home"])

            let reset = try await live.call("PATCH", base + "/customization", token: alice, json: """
                {"operations": [{"op": "resetVisibility"}, {"op": "resetSectionOrder", "section": "com.myApp.categories"}]}
                """)
            #expect(reset.field("revision") == .integer(2))
            #expect(reset.field("tabs") == .object(JSONObject()))
            #expect(reset.field("sections") == .object(JSONObject()))

            let badSize = try await live.call("GET", base + "/layout?sizeClass=huge", token: alice)
            #expect(badSize.status == 400)
        }
    }

    @Test("authorization matrix: every credential kind gets the right status")
    func authorizationMatrix() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app.one", schema: Seeds.behaviorAllAutomatic)
            let otherSecret = try await live.makeApp("app.two", schema: Seeds.behaviorAllAutomatic)
            let now = Int(Date().timeIntervalSince1970)
            let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let claims = Base64URL.encode(Array(#"{"sub":"alice","aud":"app.one","exp":\#(now + 600)}"#.utf8))
            let valid = live.userToken(app: "app.one", user: "alice", secret: secret)
            var tampered = valid
            tampered.removeLast(3)
            tampered += "AAA"
            let credentials: [(String, String?, Int)] = [
                ("no token", nil, 401),
                ("garbage", "not-a-token", 401),
                ("wrong signature", live.userToken(app: "app.one", user: "alice", secret: "wrong-secret"), 401),
                ("tampered signature", tampered, 401),
                ("alg none", "\(header).\(claims).", 401),
                ("expired", JWT.sign(subject: "alice", audience: "app.one", expiresAt: now - 120, issuedAt: now - 600, secret: secret), 401),
                ("not yet valid (iat in the future)", JWT.sign(subject: "alice", audience: "app.one", expiresAt: now + 900, issuedAt: now + 300, secret: secret), 401),
                ("other user", live.userToken(app: "app.one", user: "bob", secret: secret), 403),
                ("other app", live.userToken(app: "app.two", user: "alice", secret: otherSecret), 403),
                ("the user", valid, 200),
                ("operator", live.admin, 200),
            ]
            for (name, token, status) in credentials {
                let response = try await live.call("GET", "/v1/apps/app.one/users/alice/customization", token: token)
                #expect(response.status == status, "\(name)")
                if status == 401 {
                    #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true, "\(name)")
                    #expect(response.field("revision") == nil, "\(name) leaked data")
                }
            }
            // A user token never reaches operator endpoints.
            for (method, path) in [("GET", "/v1/apps"), ("GET", "/v1/apps/app.one"), ("DELETE", "/v1/apps/app.one"),
                                   ("POST", "/v1/apps/app.one/signing-secret"), ("GET", "/v1/apps/app.one/stats")] {
                #expect(try await live.call(method, path, token: valid).status == 403, "\(method) \(path)")
            }
            // Users may read their app's schema, not another app's.
            #expect(try await live.call("GET", "/v1/apps/app.one/schema", token: valid).status == 200)
            #expect(try await live.call("GET", "/v1/apps/app.two/schema", token: valid).status == 403)
            // Rotating the secret retires tokens signed with the old one.
            #expect(try await live.call("POST", "/v1/apps/app.one/signing-secret", token: live.admin).status == 200)
            #expect(try await live.call("GET", "/v1/apps/app.one/users/alice/customization", token: valid).status == 401)
        }
    }

    @Test("ETag \"<revision>.<schemaVersion>\", If-None-Match 304, If-Match 412, revision in a PUT body")
    func conditionalRequests() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Seeds.behaviorAllAutomatic)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let path = "/v1/apps/app/users/u/customization"
            // `*` needs a customization with a revision; a user with none has only the empty one at revision 0.
            let star = try await live.call("PUT", path, token: token, headers: [("If-Match", "*")], json: """
                {"tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}
                """)
            #expect(star.status == 412)
            #expect(star.headers["ETag"] == "\"0.1\"")
            // If-Match "0.1" names that empty customization, as GET tags it: the write applies.
            let created = try await live.call("PUT", path, token: token, headers: [("If-Match", "\"0.1\"")],
                                              json: #"{"tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}"#)
            #expect(created.status == 200)
            #expect(created.headers["ETag"] == "\"1.1\"")
            #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", "\"1.1\"")]).status == 304)
            #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", "\"0.1\"")]).status == 200)
            // The old format names no representation of this API any more.
            #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", "\"1\"")]).status == 200)
            let stale = try await live.call("PATCH", path, token: token, headers: [("If-Match", "\"1\"")], json: #"{"operations": [{"op": "resetVisibility"}]}"#)
            #expect(stale.status == 412)
            #expect(stale.headers["ETag"] == "\"1.1\"")
            let staleBody = try await live.call("PUT", path, token: token, json: #"{"revision": 0, "tabs": {}}"#)
            #expect(staleBody.status == 412)
            #expect(staleBody.headers["ETag"] == "\"1.1\"")
            let mismatch = try await live.call("PUT", path, token: token, json: #"{"userId": "someone-else"}"#)
            #expect(mismatch.status == 400)
            // The same choices again change nothing: same revision, same tag (the current one also passes If-Match).
            let same = try await live.call("PUT", path, token: token, headers: [("If-Match", "\"1.1\"")],
                                           json: #"{"revision": 1, "tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}"#)
            #expect(same.status == 200)
            #expect(same.headers["ETag"] == "\"1.1\"")
            // DELETE moves the revision forward, so an old ETag never matches new content.
            #expect(try await live.call("DELETE", path, token: token, headers: [("If-Match", "\"1.1\"")]).status == 204)
            let after = try await live.call("GET", path, token: token)
            #expect(after.field("revision") == .integer(2))
            #expect(after.headers["ETag"] == "\"2.1\"")
            #expect(after.field("tabs") == .object(JSONObject()))
        }
    }

    @Test("two clients patching concurrently lose nothing")
    func concurrentPatches() async throws {
        try await withLiveService { live in
            let items = (0..<40).map { #"{"id": "t\#($0)", "title": "T\#($0)"}"# }.joined(separator: ",")
            let secret = try await live.makeApp("app", schema: #"{"items": [{"id": "keep", "title": "Keep"}, \#(items)]}"#)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in 0..<2 {
                    group.addTask {
                        for index in stride(from: device, to: 40, by: 2) {
                            let response = try await live.call("PATCH", "/v1/apps/app/users/u/customization", token: token, json: """
                                {"operations": [{"op": "setSidebarVisibility", "tab": "t\(index)", "visibility": "hidden"}]}
                                """)
                            #expect(response.status == 200)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = try await live.call("GET", "/v1/apps/app/users/u/customization", token: token)
            #expect(final.field("revision") == .integer(40))
            guard case .object(let tabs)? = final.field("tabs") else { Issue.record("no tabs"); return }
            #expect(tabs.keys.count == 40)
        }
    }

    @Test("schema evolution: dry run counts, v2 registered, stored customizations stay valid")
    func schemaEvolution() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: ReconcilerTests.v1)
            for user in ["a", "b", "c"] {
                let token = live.userToken(app: "app", user: user, secret: secret)
                let operation = user == "c"
                    ? #"{"op": "setSidebarVisibility", "tab": "home", "visibility": "hidden"}"#
                    : #"{"op": "setSidebarVisibility", "tab": "old", "visibility": "hidden"}"#
                #expect(try await live.call("PATCH", "/v1/apps/app/users/\(user)/customization", token: token, json: #"{"operations": [\#(operation)]}"#).status == 200)
            }
            let identical = try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: ReconcilerTests.v1)
            #expect(identical.status == 200)
            #expect(identical.field("version") == .integer(1))
            let dryRun = try await live.call("PUT", "/v1/apps/app/schema?dryRun=true", token: live.admin, json: ReconcilerTests.v2)
            #expect(dryRun.status == 200)
            #expect(dryRun.field("customizationsChecked") == .integer(3))
            #expect(dryRun.field("customizationsAffected") == .integer(2))
            #expect(dryRun.ids("droppedIds") == ["old"])
            #expect(dryRun.ids("removedIds") == ["old", "s.b"])
            #expect(try await live.call("GET", "/v1/apps/app/schema", token: live.admin).field("version") == .integer(1))
            let v2 = try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: ReconcilerTests.v2)
            #expect(v2.status == 201)
            #expect(v2.headers["Location"] == "/v1/apps/app/schema/versions/2")
            let token = live.userToken(app: "app", user: "a", secret: secret)
            let read = try await live.call("GET", "/v1/apps/app/users/a/customization", token: token)
            #expect(read.field("schemaVersion") == .integer(2))
            #expect(read.field("tabs") == .object(JSONObject()))
            #expect(read.field("revision") == .integer(1))
            #expect(try await live.call("GET", "/v1/apps/app/schema/versions/1", token: token).field("version") == .integer(1))
            #expect(try await live.call("GET", "/v1/apps/app/schema/versions/9", token: token).status == 404)
            let stats = try await live.call("GET", "/v1/apps/app/stats", token: live.admin)
            #expect(stats.field("usersWithCustomization") == .integer(1))
        }
    }

    @Test("errors: 400 malformed and unknown fields, 415 content type, 404/405, 409, CORS, HEAD, metrics, probes")
    func errorsAndSystem() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Seeds.music)
            #expect(try await live.call("POST", "/v1/apps", token: live.admin, json: #"{"id": "app", "name": "again"}"#).status == 409)
            let malformed = try await live.call("POST", "/v1/apps", token: live.admin, json: #"{"id": "x", "name": "y", "colour": 1}"#)
            #expect(malformed.status == 400)
            #expect(malformed.codes == ["unknown-field"])
            #expect(try await live.call("POST", "/v1/apps", token: live.admin, json: #"{"id": "#
            ).status == 400)
            #expect(try await live.call("POST", "/v1/apps", token: live.admin, json: #"{"id": "bad id!", "name": "y"}"#).status == 422)
            #expect(try await live.call("POST", "/v1/apps", token: live.admin, headers: [("Content-Type", "text/plain")], json: "{}").status == 415)
            #expect(try await live.call("GET", "/v1/nothing", token: live.admin).status == 404)
            let notAllowed = try await live.call("PATCH", "/v1/apps", token: live.admin)
            #expect(notAllowed.status == 405)
            #expect(notAllowed.headers["Allow"]?.contains("POST") == true)
            #expect(try await live.call("GET", "/v1/apps/nope/users/u/customization", token: live.admin).status == 404)
            let preflight = try await live.call("OPTIONS", "/v1/apps/app/users/u/customization", headers: [
                ("Origin", "https://app.example"), ("Access-Control-Request-Method", "PATCH"),
            ])
            #expect(preflight.status == 204)
            #expect(preflight.headers["Access-Control-Allow-Origin"] == "https://app.example")
            #expect(preflight.headers["Access-Control-Allow-Methods"]?.contains("PATCH") == true)
            let foreign = try await live.call("GET", "/healthz", headers: [("Origin", "https://evil.example")])
            #expect(foreign.headers["Access-Control-Allow-Origin"] == nil)
            #expect(try await live.call("HEAD", "/healthz").status == 200)
            #expect(try await live.call("GET", "/readyz").status == 200)
            let metrics = try await live.call("GET", "/metrics")
            #expect(metrics.text.contains("tabstore_http_requests_total{route=\"/v1/apps\",method=\"POST\",status=\"409\"} 1"))
            // The writer reports its batches to the service's metrics (the app and schema writes above).
            let batchCount = metrics.text.split(separator: "\n").first { $0.hasPrefix("tabstore_store_write_batch_size_count ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
            #expect((batchCount ?? 0) >= 1, "\(String(describing: batchCount))")
            #expect(metrics.text.contains("tabstore_customizations 0"))
            let spec = try await live.call("GET", "/openapi.yaml")
            #expect(spec.text.hasPrefix("openapi: 3.1.0"))
        }
    }

    @Test("readyz answers 503 while the server drains (handler called in-process)")
    func readyWhileDraining() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("r.sqlite")))
        let state = ServerState()
        let api = APIResponder(store: store, configuration: APIConfiguration(adminToken: "in-process-admin-token"), serverState: state)
        let head = HTTPRequestHead(method: "GET", target: "/readyz", version: .http11, headers: HTTPHeaders([("Host", "x")]),
                                   keepAlive: true, contentLength: nil, chunked: false, expectsContinue: false)
        let context = RequestContext(requestId: "r1", receivedAt: 0)
        #expect(await api.respond(to: HTTPRequest(head: head, body: []), context: context).status == 200)
        state.startDraining()
        let draining = await api.respond(to: HTTPRequest(head: head, body: []), context: context)
        #expect(draining.status == 503)
        #expect(draining.headers["Content-Type"] == "application/problem+json")
        await store.close()
    }

    private struct BodyFailed: Error {}

    @Test("withLiveService stops the server when the body throws: its port refuses connections afterwards")
    func withLiveServiceStopsOnThrow() async throws {
        var port = 0
        await #expect(throws: BodyFailed.self) {
            try await withLiveService { live in
                port = live.port
                #expect(try await live.call("GET", "/healthz").status == 200)
                throw BodyFailed()
            }
        }
        #expect(port > 0)
        let observed = port
        let refused = try await offPool { () -> Int32? in
            do {
                _ = try RawClient(port: observed, timeout: 1)
                return nil
            } catch let error as SystemError {
                return error.errno
            } catch {
                return -1
            }
        }
        #expect(refused == ECONNREFUSED, "connecting to port \(observed) after the body threw")
    }
}
