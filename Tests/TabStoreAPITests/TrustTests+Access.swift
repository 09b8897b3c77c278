import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Items 6-9 of `TrustTests`.
extension TrustTests {
    // MARK: 6. One bad row never fails a whole-app operation

    /// `alice` and `bob` of `app.one` with a customization each, and a truncated document stored for `broken`
    /// behind the store's back (a user the API never wrote).
    static func oneDamagedRow(_ live: LiveService) async throws -> Credentials {
        let creds = try await Credentials.register(on: live)
        let bob = creds.app.token(for: "bob")
        #expect(
            try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Trust.patch([Trust.hide("com.myApp.bell")]))).status == 200)
        let bobPath = creds.app.userPath("bob") + "/customization"
        #expect(try await live.send(.patch(bobPath).bearer(bob).json(Trust.patch([Trust.hide("com.myApp.climate")]))).status == 200)
        let db = try SQLiteConnection(path: live.service.options.resolvedDatabasePath)
        try db.run("INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES (?, ?, 7, 1, ?, 't')",
                   [.text("app.one"), .text("broken"), .blob(Array(#"{"tabs": {"com.myApp.bell": {"side"#.utf8))])
        return creds
    }

    /// Another spelling of damage over real rows: bytes that are not UTF-8 (`bob`), and JSON of the wrong shape (`shape`).
    static func damageMore(_ live: LiveService) throws {
        let db = try SQLiteConnection(path: live.service.options.resolvedDatabasePath)
        try db.run("UPDATE customizations SET document = ? WHERE app_id = 'app.one' AND user_id = 'bob'", [.blob([0xFF, 0xFE, 0x7B])])
        try db.run(
            "INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES ('app.one', 'shape', 3, 1, ?, 't')",
                   [.blob(Array(#"{"tabs": [1, 2]}"#.utf8))])
    }

    @Test("damaged stored documents: stats and dry runs count them as unreadable and skip them")
    func damagedRowsCounted() async throws {
        try await withLiveService { live in
            _ = try await Self.oneDamagedRow(live)
            let stats = try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin))
            #expect(stats.status == 200)
            #expect(stats.field("unreadableCustomizations") == .integer(1))
            #expect(stats.field("storedCustomizations") == .integer(3))
            #expect(stats.field("usersWithCustomization") == .integer(2))
            let dryRun = TestRequest.put("/v1/apps/app.one/schema?dryRun=true").bearer(live.admin).json(Seeds.behaviorHomeDisabled)
            let checked = try await live.send(dryRun)
            #expect(checked.status == 200)
            #expect(checked.field("customizationsUnreadable") == .integer(1))
            #expect(checked.field("customizationsChecked") == .integer(2))

            try Self.damageMore(live)
            #expect(try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin)).field("unreadableCustomizations") == .integer(3))
            #expect(try await live.send(dryRun).field("customizationsUnreadable") == .integer(3))
        }
    }

    @Test("a damaged stored document can still be deleted, by its owner or the operator; then GET is 200 and the rest untouched")
    func damagedRowsDeletable() async throws {
        try await withLiveService { live in
            let creds = try await Self.oneDamagedRow(live)
            try Self.damageMore(live)
            // DELETE needs no decode: the owner and the operator both can, and the revision moves on.
            for (user, token, revision) in [("broken", creds.app.token(for: "broken"), 7), ("bob", live.admin, 1), ("shape", live.admin, 3)] {
                let userPath = creds.app.userPath(user) + "/customization"
                #expect(try await live.send(.delete(userPath).bearer(token)).status == 204, "\(user)")
                let after = try await live.send(.get(userPath).bearer(token))
                #expect(after.status == 200, "\(user)")
                #expect(after.field("revision") == .integer(revision + 1), "\(user)")
                #expect(after.field("tabs") == .object(JSONObject()), "\(user)")
            }
            let healed = try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin))
            #expect(healed.field("unreadableCustomizations") == .integer(0) && healed.field("usersWithCustomization") == .integer(1))
            // Alice's good row was never touched.
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).identifierKeys("tabs") == ["com.myApp.bell"])
        }
    }

    // MARK: 7. Path ids never reach SQL unchecked

    @Test("NUL and friends in an app id: 404 on every operator route; the real app's secret and schema are untouched")
    func nulInAppIds() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            for app in ["app.one%00x", "app.one%00", "app.one%00%00", "app.one%00.other", "app.one%2500x", "app.one%0A"] {
                let rotate = try await live.send(.post("/v1/apps/\(app)/signing-secret").bearer(live.admin))
                #expect(rotate.status == 404, "\(app)")
                #expect(rotate.field("signingSecret") == nil, "\(app)")
                #expect(try await live.send(.delete("/v1/apps/\(app)").bearer(live.admin)).status == 404, "\(app)")
                #expect(
                    try await live.send(.put("/v1/apps/\(app)/schema").bearer(live.admin).json(Seeds.behaviorHomeDisabled)).status == 404, "\(app)")
                #expect(try await live.send(.get("/v1/apps/\(app)/stats").bearer(live.admin)).status == 404, "\(app)")
                // The token signed before still verifies: the real app's secret did not rotate, nor was it deleted.
                #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).status == 200, "after \(app)")
            }
            #expect(try await live.send(.get("/v1/apps/app.one/schema").bearer(creds.userToken)).field("version") == .integer(1))
        }
    }

    @Test("NUL and friends in a user id: 400 invalid-user-id for every verb; the real user's data is untouched")
    func nulInUserIds() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            #expect(
                try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Trust.patch([Trust.hide("com.myApp.bell")]))).status
                    == 200)
            for user in ["alice%00x", "alice%00", "%00alice", "alice%0D%0Ax", "alice%7F", "alice%C2%85"] {
                for method in ["GET", "PATCH", "PUT", "DELETE"] {
                    let body: String? = method == "PATCH" ? Trust.patch([Trust.hide("com.myApp.climate")]) : method == "PUT" ? #"{"tabs": {}}"# : nil
                    let response = try await live.send(
                        .method(method, creds.app.userPath(user) + "/customization").bearer(live.admin).json(ifAny: body))
                    #expect(response.status == 400, "\(method) \(user)")
                    #expect(response.problemType == "urn:tabstore:problem:invalid-user-id", "\(method) \(user)")
                }
            }
            let untouched = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(untouched.field("revision") == .integer(1) && untouched.identifierKeys("tabs") == ["com.myApp.bell"])
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
            let creds = try await Credentials.register(on: live)
            let (exp, secret, otherSecret) = (creds.issuedAt + 600, creds.app.secret, creds.otherApp.secret)
            let missing = { (secret: String) in Credentials.App(id: "com.nothere", secret: secret).token(for: Credentials.user) }
            let tokens: [(String, String)] = [
                ("forged: wrong secret", creds.token(.forged)!),
                ("forged: another app's secret", creds.app.token(for: Credentials.user, signedWith: otherSecret)),
                ("forged: tampered signature", creds.token(.tampered)!),
                ("missing app, its own secret", missing("whatever")),
                ("missing app, a real app's secret", missing(secret)),
                ("missing app, NUL-suffixed real id", Trust.jwt(payload: #"{"sub":"alice","aud":"app.one\u0000","exp":\#(exp)}"#, secret: secret)),
                ("impossible app id", Trust.jwt(payload: #"{"sub":"alice","aud":"no such app!","exp":\#(exp)}"#, secret: secret)),
                ("two audiences with the path's app, another app's secret",
                 Trust.jwt(payload: #"{"sub":"alice","aud":["app.two","app.one"],"exp":\#(exp)}"#, secret: otherSecret)),
                (
                    "two audiences without the path's app",
                    Trust.jwt(payload: #"{"sub":"alice","aud":["app.two","com.nothere"],"exp":\#(exp)}"#, secret: otherSecret)
                ),
            ]
            var first: TestResponse?
            for (name, token) in tokens {
                let response = try await live.send(.get(creds.customization).bearer(token))
                #expect(response.status == 401, "\(name)")
                guard let reference = first else {
                    first = response
                    continue
                }
                #expect(response.body == reference.body, "\(name): \(response.text) vs \(reference.text)")
                #expect(response.header("WWW-Authenticate") == reference.header("WWW-Authenticate"), "\(name)")
                #expect(response.header("Content-Length") == reference.header("Content-Length"), "\(name)")
            }
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).status == 200)
        }
    }

    // MARK: 9. Authorization by construction

    /// Every route and who may call it. A new route fails `routesDeclareExpectedAccess` until it is listed here.
    static let expectedAccess: [String: RouteAccess] = [
        "GET /healthz": .anyone, "GET /readyz": .anyone, "GET /openapi.yaml": .anyone, "GET /metrics": .metrics,
        "POST /v1/apps": .operatorOnly, "GET /v1/apps": .operatorOnly,
        "GET /v1/apps/{appId}": .operatorOnly, "DELETE /v1/apps/{appId}": .operatorOnly,
        "PATCH /v1/apps/{appId}": .operatorOnly,
        "POST /v1/apps/{appId}/signing-secret": .operatorOnly, "PUT /v1/apps/{appId}/schema": .operatorOnly,
        "GET /v1/apps/{appId}/stats": .operatorOnly, "GET /v1/apps/{appId}/users": .operatorOnly,
        "POST /v1/operator-tokens": .operatorOnly, "GET /v1/operator-tokens": .operatorOnly, "DELETE /v1/operator-tokens/{name}": .operatorOnly,
        "GET /v1/audit": .operatorOnly,
        "GET /v1/apps/{appId}/schema": .appUsers, "GET /v1/apps/{appId}/schema/versions/{version}": .appUsers,
        "GET /v1/apps/{appId}/users/{userId}/customization": .pathUser, "PUT /v1/apps/{appId}/users/{userId}/customization": .pathUser,
        "PATCH /v1/apps/{appId}/users/{userId}/customization": .pathUser, "DELETE /v1/apps/{appId}/users/{userId}/customization": .pathUser,
        "GET /v1/apps/{appId}/users/{userId}/layout": .pathUser,
        "GET /v1/apps/{appId}/users/{userId}/customization/history": .pathUser,
        "GET /v1/apps/{appId}/users/{userId}/customization/events": .pathUser,
        "POST /v1/apps/{appId}/users/{userId}/customization/revert": .pathUser,
        "GET /v1/apps/{appId}/users/{userId}/export": .operatorOnly, "DELETE /v1/apps/{appId}/users/{userId}": .operatorOnly,
        "GET /v1/users/{userId}/export": .operatorOnly, "DELETE /v1/users/{userId}": .operatorOnly,
    ]

    @Test("every route declares the expected access")
    func routesDeclareExpectedAccess() async throws {
        try await withInProcessAPI { api in
            let routes = api.api.router.routes
            let declared = Dictionary(routes.map { ("\($0.method) \($0.pattern)", $0.access) }, uniquingKeysWith: { first, _ in first })
            #expect(routes.count == declared.count)
            #expect(declared == Self.expectedAccess)
        }
    }

    @Test("the server enforces every route's access: 401 anonymous, 403 other app, 403 other user and other spelling")
    func routesEnforceAccess() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let otherSpelling = creds.app.token(for: "\u{212B}lice")
            var checked = 0
            for route in live.service.api.router.routes where route.access != .anyone && route.access != .metrics {
                let path = route.pattern.replacing("{appId}", with: "app.one").replacing("{userId}", with: "alice")
                    .replacing("{version}", with: "1") + (route.pattern.hasSuffix("layout") ? "?sizeClass=compact" : "")
                let body: String? = ["PUT", "PATCH", "POST"].contains(route.method) ? "{}" : nil
                let request = TestRequest.method(route.method, path).json(ifAny: body)
                let label = "\(route.method) \(route.pattern)"
                let anonymous = try await live.send(request)
                #expect(anonymous.status == 401 && anonymous.header("WWW-Authenticate") != nil, "\(label) anonymous")
                #expect(try await live.send(request.bearer(creds.otherAppToken)).status == 403, "\(label) other app")
                if route.access == .pathUser {
                    #expect(try await live.send(request.bearer(creds.otherUserToken)).status == 403, "\(label) other user")
                    #expect(try await live.send(request.bearer(otherSpelling)).status == 403, "\(label) other spelling")
                }
                checked += 1
            }
            #expect(checked == Self.expectedAccess.values.filter { $0 != .anyone && $0 != .metrics }.count)
            #expect(try await live.send(.get("/v1/apps/app.one").bearer(live.admin)).status == 200, "nothing was changed")
        }
    }

    /// The head of a JSON upload of `length` bytes, without its body.
    static func upload(_ method: String, _ path: String, _ token: String?, length: Int) -> TestRequest {
        TestRequest(method, path).bearer(token).contentType("application/json").announcing(contentLength: length)
    }

    @Test("the head alone is refused: admit answers 401/403/400 before any body; the owner and the operator are admitted")
    func admitRefusesBeforeTheBody() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let path = creds.customization
            for method in ["PUT", "PATCH"] {
                for caller in [Caller.anonymous, .forged, .otherUser] {
                    let status = caller == .otherUser ? 403 : 401
                    let answer = api.admit(Self.upload(method, path, creds.token(caller), length: 50_000_000).expectingContinue())
                    #expect(answer?.status == status, "\(method) \(caller)")
                    if status == 401 { #expect(answer?.header("WWW-Authenticate") != nil) }
                }
                let badId = Self.upload(method, creds.app.userPath("alice%00") + "/customization", creds.userToken, length: 10)
                #expect(api.admit(badId)?.status == 400, "\(method) NUL user id")
                #expect(api.admit(Self.upload(method, path, creds.userToken, length: 10)) == nil, "\(method) owner admitted")
                #expect(api.admit(Self.upload(method, path, api.admin, length: 10)) == nil, "\(method) operator admitted")
            }
        }
    }

    @Test("the operator naming an app that does not exist is answered 404 from the head, before its body")
    func admitRefusesMissingApps() async throws {
        try await withInProcessAPI { api in
            for method in ["PUT", "PATCH"] {
                let missing = Self.upload(method, "/v1/apps/no.such/users/alice/customization", api.admin, length: 50_000_000)
                #expect(api.admit(missing)?.status == 404, "\(method) operator, missing app")
            }
            for (method, missingPath) in [("PUT", "/v1/apps/no.such/schema"), ("POST", "/v1/apps/no.such/signing-secret")] {
                #expect(api.admit(Self.upload(method, missingPath, api.admin, length: 1_000))?.status == 404, "\(method) \(missingPath)")
            }
        }
    }

    @Test("/metrics can require the operator: 401 anonymous, 403 a user, 200 the operator")
    func metricsCanRequireOperator() async throws {
        try await withInProcessAPI(configure: { $0.metricsRequireAuth = true }) { api in
            let creds = try await Credentials.register(on: api)
            #expect(await api.send(.get("/metrics")).status == 401)
            #expect(await api.send(.get("/metrics").bearer(creds.userToken)).status == 403)
            #expect(await api.send(.get("/metrics").bearer(creds.metricsToken)).status == 200)
        }
    }
}
