import Foundation
import Glibc
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

@Suite("Abuse and authorization against the live server", .serialized)
struct AbuseTests {
    @Test("every endpoint × every credential kind: refused with the right status, no data leaks")
    func authorizationMatrix() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app.one", schema: Seeds.behaviorAllAutomatic)
            let otherSecret = try await live.makeApp("app.two", schema: Seeds.behaviorAllAutomatic)
            let alice = live.userToken(app: "app.one", user: "alice", secret: secret)
            #expect(try await live.call("PATCH", "/v1/apps/app.one/users/alice/customization", token: alice,
                                        json: #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#).status == 200)
            let now = Int(Date().timeIntervalSince1970)
            let noneHeader = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8))
            let claims = Base64URL.encode(Array(#"{"sub":"alice","aud":"app.one","exp":\#(now + 600)}"#.utf8))
            // A token signed with a secret that is then rotated away.
            let rotatedAway = live.userToken(app: "app.one", user: "alice", secret: secret)
            let credentials: [(name: String, token: String?, isUser: Bool)] = [
                ("none", nil, false), ("garbage", "garbage", false),
                ("forged", live.userToken(app: "app.one", user: "alice", secret: "forged"), false),
                ("alg none", "\(noneHeader).\(claims).", false),
                ("expired", JWT.sign(subject: "alice", audience: "app.one", expiresAt: now - 100, issuedAt: now - 200, secret: secret), false),
                ("other user", live.userToken(app: "app.one", user: "mallory", secret: secret), true),
                ("other app", live.userToken(app: "app.two", user: "alice", secret: otherSecret), true),
            ]
            let routes = live.service.api.router.routes
            let publicRoutes: Set<String> = ["/healthz", "/readyz", "/metrics", "/openapi.yaml"]
            let userRoutes: Set<String> = ["/v1/apps/{appId}/users/{userId}/customization", "/v1/apps/{appId}/users/{userId}/layout"]
            let readerRoutes: Set<String> = ["/v1/apps/{appId}/schema", "/v1/apps/{appId}/schema/versions/{version}"]
            var checked = 0
            for rotated in [false, true] {
                if rotated {
                    #expect(try await live.call("POST", "/v1/apps/app.one/signing-secret", token: live.admin).status == 200)
                }
                let kinds = rotated ? [("rotated-away secret", Optional(rotatedAway), false)] : credentials
                for route in routes where !publicRoutes.contains(route.pattern) {
                    let path = route.pattern.replacing("{appId}", with: "app.one").replacing("{userId}", with: "alice")
                        .replacing("{version}", with: "1") + (route.pattern.hasSuffix("layout") ? "?sizeClass=compact" : "")
                    let body: String? = ["PUT", "PATCH", "POST"].contains(route.method) ? "{}" : nil
                    for (name, token, isUser) in kinds {
                        let response = try await live.call(route.method, path, token: token, json: body)
                        let expected: Int
                        if !isUser {
                            expected = 401
                        } else if userRoutes.contains(route.pattern) {
                            expected = 403
                        } else if readerRoutes.contains(route.pattern), route.method == "GET" {
                            expected = name == "other app" ? 403 : 200
                        } else {
                            expected = 403  // operator endpoints
                        }
                        #expect(response.status == expected, "\(route.method) \(route.pattern) with \(name)")
                        if expected >= 400 {
                            #expect(response.headers["Content-Type"] == "application/problem+json")
                            #expect(!response.text.contains("signingSecret") && !response.text.contains("\"revision\"") && !response.text.contains("com.myApp.bell"),
                                    "\(route.method) \(route.pattern) with \(name) leaked data")
                        }
                        checked += 1
                    }
                }
            }
            #expect(checked > 100)
        }
    }

    @Test("hostile bodies and paths get clear 4xx answers")
    func hostileInput() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Seeds.behaviorAllAutomatic)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let path = "/v1/apps/app/users/u/customization"
            let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
            let cases: [(String, String, Int)] = [
                ("deeply nested", #"{"operations": \#(deep)}"#, 400),
                ("number out of range", #"{"operations": [{"op": "moveTab", "section": "s", "tab": "t", "toIndex": 1e999}]}"#, 400),
                ("huge integer", #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 99999999999999999999}]}"#, 400),
                ("float index", #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 1.5}]}"#, 400),
                ("negative index", #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": -1}]}"#, 422),
                ("too many operations", #"{"operations": [\#(Array(repeating: #"{"op": "resetTabBarOrder"}"#, count: 1001).joined(separator: ","))]}"#, 400),
                ("control character id", #"{"operations": [{"op": "setSidebarVisibility", "tab": "a\u0000b", "visibility": "hidden"}]}"#, 400),
                ("id over 256 bytes in 2 characters", #"{"operations": [{"op": "setSidebarVisibility", "tab": "a\#(String(repeating: "\u{301}", count: 300))", "visibility": "hidden"}]}"#, 400),
            ]
            for (name, body, status) in cases {
                let response = try await live.call("PATCH", path, token: token, json: body)
                #expect(response.status == status, "\(name)")
                #expect(response.headers["Content-Type"] == "application/problem+json", "\(name)")
            }
            // Invalid UTF-8 in a body.
            let port = live.port
            let utf8Status = try await offPool { () throws -> Int? in
                let client = try RawClient(port: port)
                let body = Array(#"{"operations": [""#.utf8) + [0xC3, 0x28] + Array(#""]}"#.utf8)
                client.send(Array("PATCH \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
                return client.readResponse()?.status
            }
            #expect(utf8Status == 400)
            // A body over the limit is refused before it is read.
            let big = try await live.call("PUT", path, token: token, json: "\"" + String(repeating: "a", count: 1_100_000) + "\"")
            #expect(big.status == 413)
            // Percent-encoding tricks in paths.
            for (trick, status) in [("/v1/apps/app/users/u%2Fx/customization", 200), ("/v1/apps/app/users/%zz/customization", 400),
                                    ("/v1/apps/app/users/u%00/customization", 400), ("/v1/apps/app/../app/users/u/customization", 404),
                                    ("/v1/apps/app%2Fusers%2Fu/customization", 404), ("/v1//apps/app", 404)] {
                let response = try await live.call("GET", trick, token: live.admin)
                #expect(response.status == status, "\(trick)")
            }
        }
    }

    @Test("slowloris, connection floods and smuggling: a normal client is still served promptly")
    func connectionAbuse() async throws {
        var options = ServiceOptions()
        let directory = TemporaryDirectory()
        options.port = 0
        options.threads = 2
        options.dataDirectory = directory.path
        options.adminToken = "abuse-admin-token-0123456789"
        options.accessLog = false
        options.headerTimeout = 1
        options.maxConnections = 300
        let service = try TabStoreService.start(options: options, logger: .silent)
        let port = service.port
        let worst = try await offPool { () throws -> Double in
            // 200 slowloris connections, each trickling a header byte by byte.
            let slow = try (0..<200).map { _ in try RawClient(port: port, timeout: 5) }
            var worst = 0.0
            let normal = try RawClient(port: port)
            for round in 0..<6 {
                for client in slow { client.send(round == 0 ? "GET / HTTP/1.1\r\n" : "X-\(round): a\r\n") }
                let started = Date()
                guard normal.request("GET", "/healthz")?.status == 200 else { throw SystemError(call: "normal client not served", errno: 0) }
                worst = max(worst, Date().timeIntervalSince(started))
                usleep(100_000)
            }
            // The header timeout ends every slowloris connection with a 408.
            let timedOut = slow.prefix(20).filter { $0.readResponse()?.status == 408 }.count
            guard timedOut == 20 else { throw SystemError(call: "slowloris connections not timed out: \(timedOut)", errno: 0) }
            // A flood past the connection cap: refused politely, the established client still served.
            do {
                let flood = (0..<400).compactMap { _ in try? RawClient(port: port, timeout: 5) }
                let refused = flood.suffix(50).filter { $0.readResponse()?.status == 503 }.count
                guard refused > 0 else { throw SystemError(call: "no 503 past the cap", errno: 0) }
                let started = Date()
                guard normal.request("GET", "/healthz")?.status == 200 else { throw SystemError(call: "normal client not served in flood", errno: 0) }
                worst = max(worst, Date().timeIntervalSince(started))
            }
            usleep(300_000)  // the flood's connections are closed; the server notices
            _ = slow
            // Smuggling attempts: refused and closed.
            for attempt in ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n",
                            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd",
                            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n"] {
                let client = try RawClient(port: port)
                client.send(attempt)
                let status = client.readResponse()?.status
                guard status == 400 || status == 501, client.isClosedByServer(), client.readResponse() == nil else {
                    throw SystemError(call: "smuggling not refused: \(String(describing: status))", errno: 0)
                }
            }
            return worst
        }
        #expect(worst < 1.0)
        await service.shutdown()
    }
}
