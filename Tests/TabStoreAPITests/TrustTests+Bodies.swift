import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreHTTP
@testable import TabStoreSupport
import TabStoreTestSupport

/// Request bodies are decided from the head: a route that takes none refuses one (413), a JSON route refuses
/// another media type (415), and announcing a body never holds the server's body budget.
extension TrustTests {
    /// A route's pattern filled in for `app.one` and `alice`.
    static func samplePath(_ route: Router.Route) -> String {
        route.pattern.replacing("{appId}", with: "app.one").replacing("{userId}", with: "alice").replacing("{version}", with: "1")
            + (route.pattern.hasSuffix("layout") ? "?sizeClass=compact" : "")
    }

    @Test("a route that takes no body refuses one from the head (413 body-not-allowed), after access; an empty one goes on")
    func noBodyRoutesRefuseBodies() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let routes = api.api.router.routes.filter { $0.body == .empty }
            #expect(Set(routes.map(\.method)) == ["GET", "DELETE", "POST"])
            for route in routes {
                let path = Self.samplePath(route)
                for method in route.method == "GET" ? ["GET", "HEAD"] : [route.method] {
                    let label = "\(method) \(route.pattern)"
                    let plain = TestRequest(method, path).bearer(creds.admin)
                    for announcing in [plain.announcing(contentLength: 10), plain.announcingChunked()] {
                        let answer = api.admit(announcing)
                        #expect(answer?.status == 413, "\(label)")
                        if method != "HEAD" {
                            #expect(answer?.problemType == "urn:tabstore:problem:body-not-allowed", "\(label)")
                            #expect(answer?.text.contains("takes no request body") == true, "\(label)")
                        }
                    }
                    #expect(api.admit(plain.announcing(contentLength: 0)) == nil, "\(label) with Content-Length: 0")
                    if route.access != .anyone, route.access != .metrics {
                        #expect(api.admit(TestRequest(method, path).announcing(contentLength: 10))?.status == 401, "\(label) anonymous: access first")
                    }
                }
            }
            for options in [TestRequest.options("/v1/apps"), .options("/healthz"), .options("/nowhere")] {
                #expect(api.admit(options.announcing(contentLength: 10))?.status == 413, "OPTIONS \(options.target)")
                #expect(api.admit(options) == nil, "OPTIONS \(options.target) without a body")
            }
        }
    }

    @Test("a JSON route refuses another media type from the head (415) once access is granted; JSON with parameters goes on")
    func jsonRoutesRefuseOtherMediaTypes() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            let routes = api.api.router.routes.filter { $0.body == .json }
            #expect(Set(routes.map { "\($0.method) \($0.pattern)" }) == [
                "POST /v1/apps", "PATCH /v1/apps/{appId}", "PUT /v1/apps/{appId}/schema", "PUT /v1/apps/{appId}/users/{userId}/customization",
                "PATCH /v1/apps/{appId}/users/{userId}/customization", "POST /v1/apps/{appId}/users/{userId}/customization/revert",
                "POST /v1/operator-tokens",
            ])
            for route in routes {
                let label = "\(route.method) \(route.pattern)"
                let upload = TestRequest(route.method, Self.samplePath(route)).bearer(creds.admin).announcing(contentLength: 50_000)
                for type in ["text/plain", "application/jsonx", "application/x-www-form-urlencoded", ""] {
                    let answer = api.admit(upload.contentType(type))
                    #expect(answer?.status == 415, "\(label) \(type)")
                    #expect(answer?.problemType == "urn:tabstore:problem:unsupported-media-type", "\(label) \(type)")
                }
                #expect(api.admit(upload)?.status == 415, "\(label) without Content-Type")
                #expect(api.admit(upload.announcingChunked().contentType("text/plain"))?.status == 415, "\(label) chunked")
                for type in ["application/json", "Application/JSON", "application/json; charset=utf-8", "application/json ;charset=UTF-8"] {
                    #expect(api.admit(upload.contentType(type)) == nil, "\(label) \(type)")
                }
                // Who may call comes first: a stranger learns nothing from a 415.
                #expect(
                    api.admit(TestRequest(route.method, Self.samplePath(route)).contentType("text/plain").announcing(contentLength: 10))?.status
                        == 401, "\(label)")
            }
        }
    }

    @Test("heads announcing bodies hold none of the budget: after 64 of them, on every kind of route, a user's PATCH is answered (F1)")
    func announcedBodiesCannotStarveWrites() async throws {
        try await withLiveService(adjust: {
            $0.maxBodyBytes = 64 * 1024
            $0.maxBodyBytesInFlight = 64 * 1024
        }) { live in
            let creds = try await Credentials.register(on: live)
            let port = live.port
            let customization = creds.customization
            let token = creds.userToken
            let outcomes = try await offPool { () throws -> [Int?] in
                let announced = "Content-Length: 65536\r\n\r\n"
                let heads = [
                    "GET /healthz HTTP/1.1\r\nHost: x\r\n" + announced,
                    "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n" + announced,
                    "GET /metrics HTTP/1.1\r\nHost: x\r\n" + announced,
                    "HEAD /readyz HTTP/1.1\r\nHost: x\r\n" + announced,
                    "OPTIONS /v1/apps HTTP/1.1\r\nHost: x\r\n" + announced,
                    "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                    "PATCH \(customization) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: text/plain\r\n" + announced,
                    "PATCH \(customization) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
                        + "If-Match: \"99.1\"\r\n" + announced,
                ]
                let holders = try (0..<64).map { index in
                    let client = try RawClient(port: port, timeout: 2)
                    client.send(heads[index % heads.count])
                    return client
                }
                // The refusals come at once, from the head; the stale If-Match upload waits for its body.
                var statuses = holders.prefix(heads.count).map { client in client.readResponse(head: true)?.status }
                let writer = try RawClient(port: port, timeout: 3)
                let patch = TestRequest.patch(customization).bearer(token)
                    .json(#"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#)
                statuses.append(writer.request(patch)?.status)
                withExtendedLifetime(holders) {}
                return statuses
            }
            #expect(outcomes == [413, 413, 413, 413, 413, 413, 415, nil, 200])
        }
    }
}
