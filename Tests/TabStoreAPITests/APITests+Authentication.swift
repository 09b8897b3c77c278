import Foundation
import Testing
@testable import TabStoreSupport
import TabStoreTestSupport

/// Issue 12: authentication challenges (RFC 6750 §3.1), audience arrays, methods (RFC 9110 §9.1, §15.5.6),
/// and the server-owned fields a schema body may echo.
extension APITests {
    // MARK: Challenges

    @Test("a request without bearer credentials gets a 401 challenge with no error")
    func challengeWithoutCredentials() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            for headers in [[], [("Authorization", "Basic dTpw")], [("Authorization", "Bearer ")]] as [[(String, String)]] {
                let answer = try await live.send(.get(creds.customization).headers(headers))
                #expect(answer.status == 401, "\(headers)")
                #expect(answer.header("WWW-Authenticate") == #"Bearer realm="tabstore""#, "\(headers)")
            }
        }
    }

    @Test("bad bearer credentials get a 401 challenge with error=invalid_token")
    func challengeWithBadCredentials() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let forged = creds.app.token(for: Credentials.user, signedWith: creds.app.secret + "x")
            for token in [forged, "wrong-admin-token", "a.b", "a.b.c.d"] {
                let answer = try await live.send(.get(creds.customization).bearer(token))
                #expect(answer.status == 401, "\(token)")
                #expect(answer.header("WWW-Authenticate") == #"Bearer realm="tabstore", error="invalid_token""#, "\(token)")
            }
        }
    }

    @Test("a token that is not a JWT is told `invalid token` plainly, never how many parts it lacks")
    func notAJWTToldPlainly() async throws {
        try await withLiveService { live in
            for token in ["wrong-admin-token", live.admin + "-typo", "a.b", "a.b.c.d", "..."] {
                let answer = try await live.send(.get("/v1/apps").bearer(token))
                #expect(answer.status == 401, "\(token)")
                #expect(answer.field("detail") == .string("invalid token"), "\(token)")
                #expect(!answer.text.contains("three"), "\(token)")
            }
        }
    }

    // MARK: Audience arrays

    /// Tokens whose `aud` is an array: `[app.two, app.one]` signed by each app, and one naming neither app.
    static func audienceArrayTokens(_ creds: Credentials) -> (forOne: String, forTwo: String, elsewhere: String) {
        let exp = creds.issuedAt + 600
        let both = #"{"sub":"alice","aud":["app.two","app.one"],"exp":\#(exp)}"#
        return (Trust.jwt(payload: both, secret: creds.app.secret), Trust.jwt(payload: both, secret: creds.otherApp.secret),
                Trust.jwt(payload: #"{"sub":"alice","aud":["app.three","app.four"],"exp":\#(exp)}"#, secret: creds.app.secret))
    }

    static func customization(of app: String) -> String { "/v1/apps/\(app)/users/alice/customization" }

    @Test("a JWT whose aud is an array holding the path's app is verified with that app's secret, and cached per app")
    func audienceArrays() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let (forOne, forTwo, elsewhere) = Self.audienceArrayTokens(creds)
            let reference = try await live.send(.get(Self.customization(of: "app.one")).bearer(creds.token(.forged)))
            #expect(reference.status == 401)
            // Twice each, in alternation: a cached verification for one app never answers for the other.
            for _ in 0..<2 {
                #expect(try await live.send(.get(Self.customization(of: "app.one")).bearer(forOne)).status == 200)
                #expect(try await live.send(.get(Self.customization(of: "app.two")).bearer(forTwo)).status == 200)
                for (token, app) in [(forOne, "app.two"), (forTwo, "app.one"), (elsewhere, "app.one")] {
                    let refused = try await live.send(.get(Self.customization(of: app)).bearer(token))
                    #expect(refused.status == 401, "\(app)")
                    #expect(refused.body == reference.body, "\(app): same answer as a forged token")
                    #expect(refused.header("WWW-Authenticate") == reference.header("WWW-Authenticate"))
                }
            }
        }
    }

    @Test("an audience-array token is still one user's: another user's data 403, its app's schema 200, operator routes refused")
    func audienceArrayScope() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let forOne = Self.audienceArrayTokens(creds).forOne
            #expect(try await live.send(.get("/v1/apps/app.one/users/bob/customization").bearer(forOne)).status == 403)
            #expect(try await live.send(.get("/v1/apps/app.one/schema").bearer(forOne)).status == 200)
            // Routes without {appId} refuse user tokens anyway.
            #expect([401, 403].contains(try await live.send(.get("/v1/apps").bearer(forOne)).status))
        }
    }

    @Test("rotating one app's secret retires its cached audience-array verification, not the other app's")
    func audienceArrayRotation() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let (forOne, forTwo, _) = Self.audienceArrayTokens(creds)
            #expect(try await live.send(.get(Self.customization(of: "app.one")).bearer(forOne)).status == 200, "verified and cached")
            #expect(try await live.send(.post("/v1/apps/app.one/signing-secret").bearer(live.admin)).status == 200)
            #expect(try await live.send(.get(Self.customization(of: "app.one")).bearer(forOne)).status == 401)
            #expect(try await live.send(.get(Self.customization(of: "app.two")).bearer(forTwo)).status == 200)
        }
    }

    // MARK: Methods

    @Test("a method no route implements is 501 not-implemented, whatever the path")
    func unknownMethods() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Self.withBell)
            for (method, path) in [
                ("BREW", "/healthz"), ("PROPFIND", "/v1/apps"), ("TRACE", "/v1/apps/app/users/u/customization"), ("FOO", "/nowhere"),
            ] {
                let answer = try await live.send(.method(method, path).bearer(live.admin))
                #expect(answer.status == 501, "\(method) \(path)")
                #expect(answer.header("Content-Type") == "application/problem+json", "\(method)")
                #expect(answer.problemType == "urn:tabstore:problem:not-implemented", "\(method)")
            }
        }
    }

    @Test("an unknown method is refused by admit, before the body: no 100 Continue for a large upload")
    func unknownMethodRefusedBeforeBody() async throws {
        let upload = TestRequest.method("MKCOL", "/v1/apps/app/schema").expectingContinue()
        try await withInProcessAPI { api in
            #expect(api.admit(upload.announcing(contentLength: 50_000_000))?.status == 501)
        }
        // Over the wire, the head alone (a length under the body limit, which the parser would refuse first with 413):
        // an admitted head would get 100 Continue here instead.
        try await withLiveService { live throws in
            #expect(try await live.send(upload.announcing(contentLength: 500_000)).status == 501, "over the wire")
        }
    }

    @Test("/metrics labels unknown methods `other`, never by their name")
    func unknownMethodsLabelledOther() async throws {
        try await withLiveService { live in
            for method in ["BREW", "PROPFIND"] { #expect(try await live.send(.method(method, "/healthz")).status == 501, "\(method)") }
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.text.contains(#"method="other",status="501"} "#))
            #expect(!metrics.text.contains("BREW") && !metrics.text.contains("PROPFIND"))
        }
    }

    @Test("a known method a path lacks is 405 with Allow")
    func knownMethodsNotAllowed() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Self.withBell)
            for (method, path, allow) in [("PUT", "/healthz", "GET"), ("PATCH", "/v1/apps", "POST"), ("POST", "/v1/apps/app/schema", "PUT")] {
                let answer = try await live.send(.method(method, path).bearer(live.admin).json("{}"))
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(answer.header("Allow")?.contains(allow) == true, "\(method) \(path)")
            }
        }
    }

    // MARK: Schema bodies

    @Test("PUT schema type-checks the server-owned fields it ignores (version, createdAt)")
    func schemaEchoFieldsTypeChecked() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Self.withBell)
            let items = Self.withBell.dropFirst().dropLast()  // the members after "{" and before "}"
            for (extra, status) in [(#""version": "abc","#, 400), (#""createdAt": 5,"#, 400), (#""version": 1.5,"#, 400), (#""createdAt": {},"#, 400),
                                    (#""version": 7, "createdAt": "2020-01-01T00:00:00Z","#, 200), (#""version": null,"#, 200),
                                    // An integer as openapi.yaml's JSON Schema counts one: any size, `.0` allowed.
                                    (#""version": -3332433.0,"#, 200), (#""version": 334940028213659495825408,"#, 200)] {
                let body = "{" + extra + items + "}"
                let answer = try await live.send(.put("/v1/apps/app/schema").bearer(live.admin).json(body))
                #expect(answer.status == status, "\(extra) \(answer.text)")
                if status == 400 { #expect(answer.problemType == "urn:tabstore:problem:malformed-request") }
            }
            #expect(try await live.send(.get("/v1/apps/app/schema").bearer(live.admin)).field("version") == .integer(1))
        }
    }
}
