import Foundation
import Glibc
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Abuse and authorization against the live server", .serialized)
struct AbuseTests {
    /// Probes, metrics, the API description and the operator console's page and assets (they hold no data; every
    /// call the console makes carries the operator's token).
    static let publicRoutes: Set<String> = Set(
        ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] + ConsoleRoutes.assets.flatMap(ConsoleRoutes.paths))
    static let userRoutes: Set<String> = ["/v1/apps/{appId}/users/{userId}/customization", "/v1/apps/{appId}/users/{userId}/layout"]
    static let readerRoutes: Set<String> = ["/v1/apps/{appId}/schema", "/v1/apps/{appId}/schema/versions/{version}"]

    /// Every route that needs credentials, as a request naming `app.one` and `alice`, with a body where the method takes one.
    static func protectedRequests(_ live: LiveService) -> [(pattern: String, request: TestRequest)] {
        live.service.api.router.routes.filter { !publicRoutes.contains($0.pattern) }.map { route in
            let path = route.pattern.replacing("{appId}", with: "app.one").replacing("{userId}", with: "alice")
                .replacing("{version}", with: "1") + (route.pattern.hasSuffix("layout") ? "?sizeClass=compact" : "")
            let body: String? = ["PUT", "PATCH", "POST"].contains(route.method) ? "{}" : nil
            return (route.pattern, TestRequest(route.method, path).json(ifAny: body))
        }
    }

    /// `alice` of `app.one` with a customization, so a leak of it would show.
    static func aliceWithData(_ live: LiveService) async throws -> Credentials {
        let creds = try await Credentials.register(on: live)
        #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken)
            .json(#"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#)).status == 200)
        return creds
    }

    /// A refusal carries a problem document and none of the app's or the user's data.
    static func expectNoLeak(_ response: TestResponse, _ label: String) {
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(!response.text.contains("signingSecret") && !response.text.contains("\"revision\"") && !response.text.contains("com.myApp.bell"),
                "\(label) leaked data")
    }

    @Test("every endpoint × every credential kind: refused with the right status, no data leaks")
    func authorizationMatrix() async throws {
        try await withLiveService { live in
            let creds = try await Self.aliceWithData(live)
            var checked = 0
            for (pattern, request) in Self.protectedRequests(live) {
                for caller in Caller.unauthenticated + [.otherUser, .otherApp] {
                    let response = try await live.send(request.bearer(creds.token(caller)))
                    let expected: Int
                    if Caller.unauthenticated.contains(caller) {
                        expected = 401
                    } else if Self.userRoutes.contains(pattern) {
                        expected = 403
                    } else if Self.readerRoutes.contains(pattern), request.method == "GET" {
                        expected = caller == .otherApp ? 403 : 200
                    } else {
                        expected = 403  // operator endpoints
                    }
                    #expect(response.status == expected, "\(request.method) \(pattern) with \(caller)")
                    if expected >= 400 { Self.expectNoLeak(response, "\(request.method) \(pattern) with \(caller)") }
                    checked += 1
                }
            }
            #expect(checked > 100)
        }
    }

    @Test("a token signed with a secret that was then rotated away is refused on every endpoint, leaking nothing")
    func rotatedAwayTokenRefusedEverywhere() async throws {
        try await withLiveService { live in
            let creds = try await Self.aliceWithData(live)
            let rotatedAway = creds.userToken
            #expect(try await live.send(.post("/v1/apps/app.one/signing-secret").bearer(live.admin)).status == 200)
            for (pattern, request) in Self.protectedRequests(live) {
                let response = try await live.send(request.bearer(rotatedAway))
                #expect(response.status == 401, "\(request.method) \(pattern) with a rotated-away secret")
                Self.expectNoLeak(response, "\(request.method) \(pattern) with a rotated-away secret")
            }
        }
    }

    // MARK: Hostile input

    @Test("hostile JSON bodies get clear 4xx problem documents")
    func hostileBodies() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
            let cases: [(String, String, Int)] = [
                ("deeply nested", #"{"operations": \#(deep)}"#, 400),
                ("number out of range", #"{"operations": [{"op": "moveTab", "section": "s", "tab": "t", "toIndex": 1e999}]}"#, 400),
                (
                    "huge integer",
                    #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 99999999999999999999}]}"#,
                    400
                ),
                (
                    "float index",
                    #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 1.5}]}"#, 400
                ),
                (
                    "negative index",
                    #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": -1}]}"#, 422
                ),
                (
                    "too many operations",
                    #"{"operations": [\#(Array(repeating: #"{"op": "resetTabBarOrder"}"#, count: 1001).joined(separator: ","))]}"#, 400
                ),
                ("control character id", #"{"operations": [{"op": "setSidebarVisibility", "tab": "a\u0000b", "visibility": "hidden"}]}"#, 400),
                (
                    "id over 256 bytes in 2 characters",
                    #"{"operations": [{"op": "setSidebarVisibility", "tab": "a\#(String(repeating: "\u{301}", count: 300))", "visibility": "hidden"}]}"#,
                    400
                ),
            ]
            for (name, body, status) in cases {
                let response = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(body))
                #expect(response.status == status, "\(name)")
                #expect(response.header("Content-Type") == "application/problem+json", "\(name)")
            }
        }
    }

    @Test("a body that is not UTF-8 is 400")
    func invalidUTF8Body() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let body = Array(#"{"operations": [""#.utf8) + [0xC3, 0x28] + Array(#""]}"#.utf8)
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(bytes: body)).status == 400)
        }
    }

    @Test("a body over the limit is refused with 413 before it is read")
    func bodyOverLimit() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            let big = try await live.send(
                .put(creds.customization).bearer(creds.userToken).json("\"" + String(repeating: "a", count: 1_100_000) + "\""))
            #expect(big.status == 413)
        }
    }

    @Test("percent-encoding tricks in paths never reach another resource")
    func percentEncodingTricks() async throws {
        try await withLiveService { live in
            _ = try await Credentials.register(on: live)
            for (trick, status) in [("/v1/apps/app.one/users/u%2Fx/customization", 200), ("/v1/apps/app.one/users/%zz/customization", 400),
                                    ("/v1/apps/app.one/users/u%00/customization", 400), ("/v1/apps/app.one/../app.one/users/u/customization", 404),
                                    ("/v1/apps/app.one%2Fusers%2Fu/customization", 404), ("/v1//apps/app.one", 404)] {
                let response = try await live.send(.get(trick).bearer(live.admin))
                #expect(response.status == status, "\(trick)")
            }
        }
    }

    // MARK: Connections

    /// A service that times out headers after a second and takes at most 300 connections.
    static func adjustForAbuse(_ options: inout ServiceOptions) {
        options.headerTimeout = 1
        options.maxConnections = 300
    }

    @Test("200 slowloris connections: a normal client is still served promptly, and the header timeout ends them with 408")
    func slowloris() async throws {
        try await withLiveService(adjust: Self.adjustForAbuse) { live in
            let port = live.port
            let worst = try await offPool { () throws -> Double in
                // 200 slowloris connections, each trickling a header line by line.
                let slow = try (0..<200).map { _ in try RawClient(port: port, timeout: 5) }
                var worst = 0.0
                let normal = try RawClient(port: port)
                for round in 0..<6 {
                    for client in slow { client.send(round == 0 ? "GET / HTTP/1.1\r\n" : "X-\(round): a\r\n") }
                    let started = Date()
                    guard normal.request(.get("/healthz"))?.status == 200 else { throw TestFailure("normal client not served") }
                    worst = max(worst, Date().timeIntervalSince(started))
                    usleep(100_000)
                }
                // The header timeout ends every slowloris connection with a 408.
                let timedOut = slow.prefix(20).filter { $0.readResponse()?.status == 408 }.count
                guard timedOut == 20 else { throw TestFailure("slowloris connections not timed out: \(timedOut)") }
                return worst
            }
            #expect(worst < 1.0)
        }
    }

    @Test("a flood past the connection cap is refused politely with 503; an established client is still served promptly")
    func connectionFlood() async throws {
        try await withLiveService(adjust: Self.adjustForAbuse) { live in
            let port = live.port
            let worst = try await offPool { () throws -> Double in
                let normal = try RawClient(port: port)
                guard normal.request(.get("/healthz"))?.status == 200 else { throw TestFailure("normal client not served") }
                let flood = (0..<400).compactMap { _ in try? RawClient(port: port, timeout: 5) }
                let refused = flood.suffix(50).filter { $0.readResponse()?.status == 503 }.count
                guard refused > 0 else { throw TestFailure("no 503 past the cap") }
                let started = Date()
                guard normal.request(.get("/healthz"))?.status == 200 else { throw TestFailure("normal client not served in flood") }
                return Date().timeIntervalSince(started)
            }
            #expect(worst < 1.0)
        }
    }

    @Test("request smuggling attempts (CL+TE, two lengths, two encodings) are refused and the connection closed")
    func smuggling() async throws {
        try await withLiveService(adjust: Self.adjustForAbuse) { live in
            let port = live.port
            try await offPool {
                for attempt in [
                    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n",
                                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd",
                                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n"] {
                    let client = try RawClient(port: port)
                    client.send(attempt)
                    let status = client.readResponse()?.status
                    guard status == 400 || status == 501, client.isClosedByServer(), client.readResponse() == nil else {
                        throw TestFailure("smuggling not refused: \(String(describing: status))")
                    }
                }
            }
        }
    }
}
