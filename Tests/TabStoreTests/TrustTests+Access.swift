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

/// Items 6-9 of `TrustTests`.
extension TrustTests {
    // MARK: 6. One bad row never fails a whole-app operation

    @Test("damaged stored documents: stats and dry runs count and skip them, DELETE still works, then GET is 200")
    func damagedRowsStayLocal() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Seeds.behaviorAllAutomatic)
            let alice = live.userToken(app: "app", user: "alice", secret: secret)
            let bob = live.userToken(app: "app", user: "bob", secret: secret)
            #expect(try await live.call("PATCH", "/v1/apps/app/users/alice/customization", token: alice, json: Trust.patch([Trust.hide("com.myApp.bell")])).status == 200)
            #expect(try await live.call("PATCH", "/v1/apps/app/users/bob/customization", token: bob, json: Trust.patch([Trust.hide("com.myApp.climate")])).status == 200)
            let path = live.service.options.resolvedDatabasePath
            do {
                // Behind the store's back: a truncated document for a user the API never wrote.
                let db = try SQLiteConnection(path: path)
                try db.run("INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES (?, ?, 7, 1, ?, 't')",
                           [.text("app"), .text("broken"), .blob(Array(#"{"tabs": {"com.myApp.bell": {"side"#.utf8))])
            }
            let stats = try await live.call("GET", "/v1/apps/app/stats", token: live.admin)
            #expect(stats.status == 200)
            #expect(stats.field("unreadableCustomizations") == .integer(1))
            #expect(stats.field("storedCustomizations") == .integer(3))
            #expect(stats.field("usersWithCustomization") == .integer(2))
            let dryRun = try await live.call("PUT", "/v1/apps/app/schema?dryRun=true", token: live.admin, json: Seeds.behaviorHomeDisabled)
            #expect(dryRun.status == 200)
            #expect(dryRun.field("customizationsUnreadable") == .integer(1))
            #expect(dryRun.field("customizationsChecked") == .integer(2))

            // Another spelling of damage: bytes that are not UTF-8, and JSON of the wrong shape, over real rows.
            do {
                let db = try SQLiteConnection(path: path)
                try db.run("UPDATE customizations SET document = ? WHERE app_id = 'app' AND user_id = 'bob'", [.blob([0xFF, 0xFE, 0x7B])])
                try db.run("INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES ('app', 'shape', 3, 1, ?, 't')",
                           [.blob(Array(#"{"tabs": [1, 2]}"#.utf8))])
            }
            #expect(try await live.call("GET", "/v1/apps/app/stats", token: live.admin).field("unreadableCustomizations") == .integer(3))
            #expect(try await live.call("PUT", "/v1/apps/app/schema?dryRun=true", token: live.admin, json: Seeds.behaviorHomeDisabled)
                .field("customizationsUnreadable") == .integer(3))

            // DELETE needs no decode: the owner and the operator both can, and the revision moves on.
            let broken = live.userToken(app: "app", user: "broken", secret: secret)
            for (user, token, revision) in [("broken", broken, 7), ("bob", live.admin, 1), ("shape", live.admin, 3)] {
                let userPath = "/v1/apps/app/users/\(user)/customization"
                #expect(try await live.call("DELETE", userPath, token: token).status == 204, "\(user)")
                let after = try await live.call("GET", userPath, token: token)
                #expect(after.status == 200, "\(user)")
                #expect(after.field("revision") == .integer(revision + 1), "\(user)")
                #expect(after.field("tabs") == .object(JSONObject()), "\(user)")
            }
            let healed = try await live.call("GET", "/v1/apps/app/stats", token: live.admin)
            #expect(healed.field("unreadableCustomizations") == .integer(0) && healed.field("usersWithCustomization") == .integer(1))
            // Alice's good row was never touched.
            #expect(Trust.keys(try await live.call("GET", "/v1/apps/app/users/alice/customization", token: alice), "tabs") == ["com.myApp.bell"])
        }
    }

    // MARK: 7. Path ids never reach SQL unchecked

    @Test("NUL and friends in path ids: 404 for app ids, 400 for user ids; com.myApp's secret and data are untouched")
    func nulInPathIds() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("com.myApp", schema: Seeds.behaviorAllAutomatic)
            let alice = live.userToken(app: "com.myApp", user: "alice", secret: secret)
            let base = "/v1/apps/com.myApp/users/alice/customization"
            #expect(try await live.call("PATCH", base, token: alice, json: Trust.patch([Trust.hide("com.myApp.bell")])).status == 200)
            for app in ["com.myApp%00x", "com.myApp%00", "com.myApp%00%00", "com.myApp%00.other", "com.myApp%2500x", "com.myApp%0A"] {
                let rotate = try await live.call("POST", "/v1/apps/\(app)/signing-secret", token: live.admin)
                #expect(rotate.status == 404, "\(app)")
                #expect(rotate.field("signingSecret") == nil, "\(app)")
                #expect(try await live.call("DELETE", "/v1/apps/\(app)", token: live.admin).status == 404, "\(app)")
                #expect(try await live.call("PUT", "/v1/apps/\(app)/schema", token: live.admin, json: Seeds.behaviorHomeDisabled).status == 404, "\(app)")
                #expect(try await live.call("GET", "/v1/apps/\(app)/stats", token: live.admin).status == 404, "\(app)")
                // The token signed before still verifies: the real app's secret did not rotate, nor was it deleted.
                #expect(try await live.call("GET", base, token: alice).status == 200, "after \(app)")
            }
            #expect(try await live.call("GET", "/v1/apps/com.myApp/schema", token: alice).field("version") == .integer(1))
            for user in ["alice%00x", "alice%00", "%00alice", "alice%0D%0Ax", "alice%7F", "alice%C2%85"] {
                for method in ["GET", "PATCH", "PUT", "DELETE"] {
                    let body: String? = method == "PATCH" ? Trust.patch([Trust.hide("com.myApp.climate")]) : method == "PUT" ? #"{"tabs": {}}"# : nil
                    let response = try await live.call(method, "/v1/apps/com.myApp/users/\(user)/customization", token: live.admin, json: body)
                    #expect(response.status == 400, "\(method) \(user)")
                    #expect(response.field("type") == .string("urn:tabstore:problem:invalid-user-id"), "\(method) \(user)")
                }
            }
            let untouched = try await live.call("GET", base, token: alice)
            #expect(untouched.field("revision") == .integer(1) && Trust.keys(untouched, "tabs") == ["com.myApp.bell"])
        }
    }

    @Test("SQLite text binds by byte length: a NUL inside text round-trips and never truncates a key")
    func textWithNulRoundTrips() throws {
        let directory = TemporaryDirectory()
        let db = try SQLiteConnection(path: directory.file("nul.sqlite"))
        try db.execute("CREATE TABLE t (k TEXT PRIMARY KEY NOT NULL, v INTEGER NOT NULL) WITHOUT ROWID")
        for (offset, key) in ["a\u{0}b", "a", "a\u{0}", "\u{0}", "com.myApp\u{0}x", "com.myApp"].enumerated() {
            try db.run("INSERT INTO t (k, v) VALUES (?, ?)", [.text(key), .integer(offset)])
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 6)
        let select = try db.statement("SELECT k, length(CAST(k AS BLOB)), v FROM t WHERE k = ?")
        for (offset, key) in ["a\u{0}b", "a", "a\u{0}", "\u{0}", "com.myApp\u{0}x", "com.myApp"].enumerated() {
            try select.bind([.text(key)])
            #expect(try select.step(), "\(key.debugDescription)")
            #expect(Array(select.text(0).utf8) == Array(key.utf8), "\(key.debugDescription)")
            #expect(select.int(1) == key.utf8.count && select.int(2) == offset, "\(key.debugDescription)")
            #expect(try !select.step())
            select.reset()
        }
    }

    // MARK: 8. Token errors reveal nothing

    @Test("a forged token for an existing app and a well-signed one for a missing app get byte-identical 401s")
    func uniformTokenErrors() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("com.myApp", schema: Seeds.behaviorAllAutomatic)
            let otherSecret = try await live.makeApp("com.other", schema: Seeds.behaviorAllAutomatic)
            let exp = Trust.now() + 600
            let valid = live.userToken(app: "com.myApp", user: "alice", secret: secret)
            var tampered = valid
            tampered.removeLast(3)
            tampered += "AAA"
            let tokens: [(String, String)] = [
                ("forged: wrong secret", live.userToken(app: "com.myApp", user: "alice", secret: "guessed-secret")),
                ("forged: another app's secret", live.userToken(app: "com.myApp", user: "alice", secret: otherSecret)),
                ("forged: tampered signature", tampered),
                ("missing app, its own secret", live.userToken(app: "com.nothere", user: "alice", secret: "whatever")),
                ("missing app, a real app's secret", live.userToken(app: "com.nothere", user: "alice", secret: secret)),
                ("missing app, NUL-suffixed real id", Trust.jwt(payload: #"{"sub":"alice","aud":"com.myApp\u0000","exp":\#(exp)}"#, secret: secret)),
                ("impossible app id", Trust.jwt(payload: #"{"sub":"alice","aud":"no such app!","exp":\#(exp)}"#, secret: secret)),
                ("two audiences with the path's app, another app's secret",
                 Trust.jwt(payload: #"{"sub":"alice","aud":["com.other","com.myApp"],"exp":\#(exp)}"#, secret: otherSecret)),
                ("two audiences without the path's app", Trust.jwt(payload: #"{"sub":"alice","aud":["com.other","com.nothere"],"exp":\#(exp)}"#, secret: otherSecret)),
            ]
            var first: RawClient.Response?
            for (name, token) in tokens {
                let response = try await live.call("GET", "/v1/apps/com.myApp/users/alice/customization", token: token)
                #expect(response.status == 401, "\(name)")
                guard let reference = first else {
                    first = response
                    continue
                }
                #expect(response.body == reference.body, "\(name): \(response.text) vs \(reference.text)")
                #expect(response.headers["WWW-Authenticate"] == reference.headers["WWW-Authenticate"], "\(name)")
                #expect(response.headers["Content-Length"] == reference.headers["Content-Length"], "\(name)")
            }
            #expect(try await live.call("GET", "/v1/apps/com.myApp/users/alice/customization", token: valid).status == 200)
        }
    }

    // MARK: 9. Authorization by construction

    /// Every route and who may call it. A new route fails `routesDeclareExpectedAccess` until it is listed here.
    static let expectedAccess: [String: RouteAccess] = [
        "GET /healthz": .anyone, "GET /readyz": .anyone, "GET /openapi.yaml": .anyone, "GET /metrics": .metrics,
        "POST /v1/apps": .operatorOnly, "GET /v1/apps": .operatorOnly,
        "GET /v1/apps/{appId}": .operatorOnly, "DELETE /v1/apps/{appId}": .operatorOnly,
        "POST /v1/apps/{appId}/signing-secret": .operatorOnly, "PUT /v1/apps/{appId}/schema": .operatorOnly,
        "GET /v1/apps/{appId}/stats": .operatorOnly,
        "GET /v1/apps/{appId}/schema": .appUsers, "GET /v1/apps/{appId}/schema/versions/{version}": .appUsers,
        "GET /v1/apps/{appId}/users/{userId}/customization": .pathUser, "PUT /v1/apps/{appId}/users/{userId}/customization": .pathUser,
        "PATCH /v1/apps/{appId}/users/{userId}/customization": .pathUser, "DELETE /v1/apps/{appId}/users/{userId}/customization": .pathUser,
        "GET /v1/apps/{appId}/users/{userId}/layout": .pathUser,
    ]

    @Test("every route declares the expected access, and the server enforces it: 401 anonymous, 403 other app, 403 other user")
    func routesDeclareExpectedAccess() async throws {
        try await withLiveService { live in
            let routes = live.service.api.router.routes
            let declared = Dictionary(routes.map { ("\($0.method) \($0.pattern)", $0.access) }, uniquingKeysWith: { first, _ in first })
            #expect(routes.count == declared.count)
            #expect(declared == Self.expectedAccess)
            let secret = try await live.makeApp("app.one", schema: Seeds.behaviorAllAutomatic)
            let otherSecret = try await live.makeApp("app.two", schema: Seeds.behaviorAllAutomatic)
            let otherApp = live.userToken(app: "app.two", user: "alice", secret: otherSecret)
            let otherUser = live.userToken(app: "app.one", user: "mallory", secret: secret)
            let otherSpelling = live.userToken(app: "app.one", user: "\u{212B}lice", secret: secret)
            var checked = 0
            for route in routes where route.access != .anyone && route.access != .metrics {
                let path = route.pattern.replacing("{appId}", with: "app.one").replacing("{userId}", with: "alice")
                    .replacing("{version}", with: "1") + (route.pattern.hasSuffix("layout") ? "?sizeClass=compact" : "")
                let body: String? = ["PUT", "PATCH", "POST"].contains(route.method) ? "{}" : nil
                let label = "\(route.method) \(route.pattern)"
                let anonymous = try await live.call(route.method, path, json: body)
                #expect(anonymous.status == 401 && anonymous.headers["WWW-Authenticate"] != nil, "\(label) anonymous")
                #expect(try await live.call(route.method, path, token: otherApp, json: body).status == 403, "\(label) other app")
                if route.access == .pathUser {
                    #expect(try await live.call(route.method, path, token: otherUser, json: body).status == 403, "\(label) other user")
                    #expect(try await live.call(route.method, path, token: otherSpelling, json: body).status == 403, "\(label) other spelling")
                }
                checked += 1
            }
            #expect(checked == Self.expectedAccess.values.filter { $0 != .anyone && $0 != .metrics }.count)
            #expect(try await live.call("GET", "/v1/apps/app.one", token: live.admin).status == 200, "nothing was changed")
        }
    }

    @Test("the head alone is refused: admit answers 401/403/400 before any body, and /metrics can require the operator")
    func admitRefusesBeforeTheBody() async throws {
        let harness = try InProcessAPI(metricsRequireAuth: true)
        let secret = try await harness.makeApp("app", schema: Seeds.behaviorAllAutomatic)
        let owner = JWT.sign(subject: "alice", audience: "app", expiresAt: Trust.now() + 600, issuedAt: Trust.now(), secret: secret)
        let other = JWT.sign(subject: "bob", audience: "app", expiresAt: Trust.now() + 600, issuedAt: Trust.now(), secret: secret)
        let forged = JWT.sign(subject: "alice", audience: "app", expiresAt: Trust.now() + 600, issuedAt: Trust.now(), secret: "forged")
        let path = "/v1/apps/app/users/alice/customization"
        for method in ["PUT", "PATCH"] {
            for (name, token, status) in [("no Authorization", nil, 401), ("forged", forged, 401), ("other user", other, 403)] as [(String, String?, Int)] {
                let head = InProcessAPI.head(method, path, token: token, contentLength: 50_000_000, expectsContinue: true)
                let answer = harness.api.admit(head, context: InProcessAPI.context)
                #expect(answer?.status == status, "\(method) \(name)")
                if status == 401 { #expect(answer?.headers["WWW-Authenticate"] != nil) }
            }
            let badId = InProcessAPI.head(method, "/v1/apps/app/users/alice%00/customization", token: owner, contentLength: 10)
            #expect(harness.api.admit(badId, context: InProcessAPI.context)?.status == 400, "\(method) NUL user id")
            #expect(harness.api.admit(InProcessAPI.head(method, path, token: owner, contentLength: 10), context: InProcessAPI.context) == nil, "\(method) owner admitted")
            // The operator may name any app; one that does not exist is answered before its body too.
            let missing = InProcessAPI.head(method, "/v1/apps/no.such/users/alice/customization", token: harness.admin, contentLength: 50_000_000)
            #expect(harness.api.admit(missing, context: InProcessAPI.context)?.status == 404, "\(method) operator, missing app")
            #expect(harness.api.admit(InProcessAPI.head(method, path, token: harness.admin, contentLength: 10), context: InProcessAPI.context) == nil,
                    "\(method) operator admitted")
        }
        for (method, missingPath) in [("PUT", "/v1/apps/no.such/schema"), ("POST", "/v1/apps/no.such/signing-secret")] {
            let head = InProcessAPI.head(method, missingPath, token: harness.admin, contentLength: 1_000)
            #expect(harness.api.admit(head, context: InProcessAPI.context)?.status == 404, "\(method) \(missingPath)")
        }
        #expect(await harness.call("GET", "/metrics", token: nil).status == 401)
        #expect(await harness.call("GET", "/metrics", token: owner).status == 403)
        #expect(await harness.call("GET", "/metrics", token: harness.admin).status == 200)
        await harness.close()
    }
}
