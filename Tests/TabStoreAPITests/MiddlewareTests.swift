import Dispatch
import Glibc
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// The seams of the API's request flow: the middleware wraps every answer (refusals from the head alone,
/// problems, handler answers), routing tells it the route pattern, and a router built outside is served
/// through the same chain.
@Suite("API middleware wraps every answer, refusals included")
struct MiddlewareTests {
    static let origin = "https://app.example"
    static let admin = "middleware-admin-token-0123456789"
    static let customization = "/v1/apps/app/users/alice/customization"
    static let customizationPattern = "/v1/apps/{appId}/users/{userId}/customization"

    static func services(_ store: SQLiteStore, logger: Logger = .silent) -> APIServices {
        var configuration = APIConfiguration(adminToken: admin)
        configuration.allowedOrigins = [origin]
        configuration.accessLog = logger !== Logger.silent
        return APIServices(store: store, configuration: configuration, serverState: ServerState(), metrics: Metrics(), logger: logger)
    }

    /// The API as `main` builds it, with CORS on.
    static func api(_ store: SQLiteStore) -> APIResponder {
        let services = services(store)
        return APIResponder(services: services, router: APIRoutes.router(services))
    }

    static func head(_ method: String, _ target: String, token: String? = nil, origin: String? = MiddlewareTests.origin) -> HTTPRequestHead {
        var headers = HTTPHeaders([("Host", "x")])
        if let token { headers.add("Authorization", "Bearer \(token)") }
        if let origin { headers.add("Origin", origin) }
        return HTTPRequestHead(method: method, target: target, version: .http11, headers: headers, keepAlive: true,
                               contentLength: nil, chunked: false, expectsContinue: false)
    }

    static func request(_ method: String, _ target: String, token: String? = nil, origin: String? = MiddlewareTests.origin) -> HTTPRequest {
        HTTPRequest(head: head(method, target, token: token, origin: origin), body: [])
    }

    static let context = RequestContext(requestId: "middleware-test", receivedAt: DispatchTime.now().uptimeNanoseconds)

    /// `tabstore_http_requests_total` for one label set, nil when never counted.
    static func count(_ metrics: Metrics, route: String, method: String, status: Int) -> Int? {
        let prefix = "tabstore_http_requests_total{route=\"\(route)\",method=\"\(method)\",status=\"\(status)\"} "
        return metrics.render(customizations: 0).split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    /// Creates app `app` through the API; a token of its user `alice`.
    static func userToken(_ api: APIResponder) async throws -> String {
        var create = request("POST", "/v1/apps", token: admin)
        create.head.headers.add("Content-Type", "application/json")
        create.body = Array(#"{"id": "app", "name": "Middleware"}"#.utf8)
        let created = await api.respond(to: create, context: context)
        guard created.status == 201, case .object(let body)? = try? JSONParser.parse(created.body), case .string(let secret)? = body["signingSecret"]
        else {
            throw APIError.badRequest(.invalidParameter, "could not create the app: \(created.status)")
        }
        let now = Int(Timestamp.unixNow())
        return JWT.sign(subject: "alice", audience: "app", expiresAt: now + 600, issuedAt: now, secret: secret)
    }

    @Test("CORS, Vary: Origin and Cache-Control: no-store go on refusals too: 401/404/405/501 from admit, 401/403/404/405 from respond")
    func corsOnRefusals() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("cors.sqlite")))
        let api = Self.api(store)
        let alice = try await Self.userToken(api)
        let answers: [(String, Int, HTTPResponse?)] = [
            ("admit, no token", 401, api.admit(Self.head("PUT", Self.customization), context: Self.context)),
            ("admit, no route", 404, api.admit(Self.head("PUT", "/v1/nothing/here"), context: Self.context)),
            ("admit, method the path lacks", 405, api.admit(Self.head("PUT", "/healthz"), context: Self.context)),
            ("admit, unknown method", 501, api.admit(Self.head("BREW", Self.customization), context: Self.context)),
            ("respond, no token", 401, await api.respond(to: Self.request("GET", Self.customization), context: Self.context)),
            ("respond, not the operator", 403, await api.respond(to: Self.request("GET", "/v1/apps", token: alice), context: Self.context)),
            ("respond, no route", 404, await api.respond(to: Self.request("GET", "/nothing"), context: Self.context)),
            ("respond, method the path lacks", 405, await api.respond(to: Self.request("DELETE", "/healthz"), context: Self.context)),
        ]
        for (label, status, answer) in answers {
            guard let answer else {
                Issue.record("\(label): no answer")
                continue
            }
            #expect(answer.status == status, "\(label): \(answer.status)")
            #expect(answer.headers["Access-Control-Allow-Origin"] == Self.origin, "\(label)")
            #expect(answer.headers["Access-Control-Expose-Headers"]?.contains("WWW-Authenticate") == true, "\(label)")
            #expect(answer.headers.tokens("Vary") == ["origin"], "\(label)")
            #expect(answer.headers.values("Cache-Control") == ["no-store"], "\(label)")
        }
        // Another origin: the answer still varies by Origin, and grants nothing.
        let foreign = await api.respond(to: Self.request("GET", Self.customization, origin: "https://evil.example"), context: Self.context)
        #expect(foreign.status == 401 && foreign.headers.tokens("Vary") == ["origin"] && foreign.headers["Access-Control-Allow-Origin"] == nil)
        // A preflight: the Allow-* headers name the methods the answer's Allow lists.
        var preflight = Self.request("OPTIONS", Self.customization)
        preflight.head.headers.add("Access-Control-Request-Method", "PATCH")
        let allowed = await api.respond(to: preflight, context: Self.context)
        #expect(allowed.status == 204 && allowed.headers["Access-Control-Allow-Methods"] == allowed.headers["Allow"])
        #expect(allowed.headers["Allow"]?.contains("PATCH") == true && allowed.headers["Access-Control-Max-Age"] == "600")
        #expect(allowed.headers.values("Cache-Control") == ["no-store"], "a preflight chose no caching: the default applies")
        // A browser on another origin can make safe retries and resume feeds, and read what says it did.
        let requestable = Set(
            (allowed.headers["Access-Control-Allow-Headers"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(requestable.isSuperset(of: ["Idempotency-Key", "Last-Event-ID", "If-Match", "If-None-Match"]))
        let readable = Set(
            (allowed.headers["Access-Control-Expose-Headers"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(readable.isSuperset(of: ["Idempotent-Replayed", "Retry-After", "ETag"]), "\(readable)")
        await store.close()
    }

    @Test("metrics count a refusal under its route pattern, an unknown path as unmatched, and an answer left to respond once")
    func metricsCountRefusals() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("metrics.sqlite")))
        let api = Self.api(store)
        #expect(api.admit(Self.head("PUT", Self.customization), context: Self.context)?.status == 401)
        #expect(api.admit(Self.head("PATCH", "/v1/apps/other/users/bob/customization", token: "not-a-token"), context: Self.context)?.status == 401)
        #expect(Self.count(api.metrics, route: Self.customizationPattern, method: "PUT", status: 401) == 1)
        #expect(Self.count(api.metrics, route: Self.customizationPattern, method: "PATCH", status: 401) == 1)
        #expect(await api.respond(to: Self.request("GET", "/no/such/path"), context: Self.context).status == 404)
        #expect(Self.count(api.metrics, route: "unmatched", method: "GET", status: 404) == 1)
        // Admitted, and GET /v1/apps has no inline handler: neither step answers, so neither counts.
        let list = Self.request("GET", "/v1/apps", token: Self.admin)
        #expect(api.admit(list.head, context: Self.context) == nil)
        #expect(api.respondInline(to: list, context: Self.context) == nil)
        #expect(Self.count(api.metrics, route: "/v1/apps", method: "GET", status: 200) == nil)
        #expect(await api.respond(to: list, context: Self.context).status == 200)
        #expect(Self.count(api.metrics, route: "/v1/apps", method: "GET", status: 200) == 1)
        // An inline answer counts once, under its pattern.
        #expect(api.respondInline(to: Self.request("GET", "/healthz"), context: Self.context)?.status == 200)
        #expect(Self.count(api.metrics, route: "/healthz", method: "GET", status: 200) == 1)
        await store.close()
    }

    @Test("the access log has one line per answer, a refusal from the head alone included, naming the route pattern")
    func accessLogOfRefusal() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("log.sqlite")))
        let services = Self.services(store, logger: Logger(minimum: .info, fd: fds[1]))
        let api = APIResponder(services: services, router: APIRoutes.router(services))
        let refusal = api.admit(Self.head("PUT", Self.customization), context: Self.context)
        #expect(api.admit(Self.head("GET", "/healthz"), context: Self.context) == nil, "admitted: no line")
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(fds[0])
        store.closeNow()
        let lines = bytes.split(separator: 0x0A)
        #expect(lines.count == 1)
        guard case .object(let line)? = try? JSONParser.parse(Array(lines.first ?? [])) else {
            Issue.record("not a JSON line: \(String(decoding: bytes, as: UTF8.self))")
            return
        }
        #expect(line["event"] == .string("request") && line["method"] == .string("PUT"))
        #expect(line["route"] == .string(Self.customizationPattern) && line["status"] == .integer(401))
        #expect(line["bytes"] == .integer(refusal?.body.count ?? -1) && line["requestId"] == .string("middleware-test"))
        #expect(line["durationMs"] != nil)
    }

    @Test("the access log names the operator token of an operator's request, and nobody for a user's")
    func accessLogNamesOperator() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("log.sqlite")))
        let services = Self.services(store, logger: Logger(minimum: .info, fd: fds[1]))
        let api = APIResponder(services: services, router: APIRoutes.router(services))
        #expect(await api.respond(to: Self.request("GET", "/v1/apps", token: Self.admin), context: Self.context).status == 200)
        #expect(await api.respond(to: Self.request("GET", "/v1/apps", token: "not-the-operator"), context: Self.context).status == 401)
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(fds[0])
        await store.close()
        let lines = bytes.split(separator: 0x0A).compactMap { line -> JSONObject? in
            guard case .object(let object)? = try? JSONParser.parse(Array(line)), object["event"] == .string("request") else { return nil }
            return object
        }
        #expect(lines.count == 2)
        #expect(lines.first?["operator"] == .string("bootstrap") && lines.first?["status"] == .integer(200))
        #expect(lines.last?["operator"] == nil && lines.last?["status"] == .integer(401))
        #expect(!String(decoding: bytes, as: UTF8.self).contains(Self.admin), "never the token")
    }

    @Test(
        "a router built outside is served through the same chain: a handler's unexpected error is a 500 problem with CORS, counted under its pattern")
    func givenRouter() async throws {
        struct Unexpected: Error {}
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("router.sqlite")))
        var builder = Router.Builder()
        builder.add("GET", "/boom/{id}", access: .anyone, body: .empty) { _, _ in throw Unexpected() }
        let api = APIResponder(services: Self.services(store), router: builder.build())
        let answer = await api.respond(to: Self.request("GET", "/boom/1"), context: Self.context)
        #expect(answer.status == 500 && answer.headers["Content-Type"] == "application/problem+json")
        #expect(answer.headers["Access-Control-Allow-Origin"] == Self.origin)
        #expect(Self.count(api.metrics, route: "/boom/{id}", method: "GET", status: 500) == 1)
        #expect(await api.respond(to: Self.request("GET", "/healthz"), context: Self.context).status == 404, "only the given routes")
        await store.close()
    }

    /// Marks the answer on its way out with its name and the route pattern it saw; `answers` makes it answer
    /// without calling `next`.
    struct Tracer: APIMiddleware {
        let name: String
        var answers = false

        func respond(to request: HTTPRequest, context: inout APIRequestContext,
                     next: (HTTPRequest, inout APIRequestContext) async -> HTTPResponse) async -> HTTPResponse {
            if answers { return HTTPResponse(status: 418, headers: HTTPHeaders([("Trace", name)])) }
            var response = await next(request, &context)
            response.headers.add("Trace", "\(name) \(context.pattern)")
            return response
        }

        func respondNow(to request: HTTPRequest, context: inout APIRequestContext,
                        next: (HTTPRequest, inout APIRequestContext) -> HTTPResponse?) -> HTTPResponse? {
            if answers { return HTTPResponse(status: 418, headers: HTTPHeaders([("Trace", name)])) }
            guard var response = next(request, &context) else { return nil }
            response.headers.add("Trace", "\(name) \(context.pattern)")
            return response
        }
    }

    @Test(
        "a pair runs outer around inner on both entries: inner amends first, both see the pattern routing set, nil passes through, a middleware that answers skips the rest"
    )
    func chainOrder() async {
        let chain = MiddlewarePair(Tracer(name: "outer"), MiddlewarePair(Tracer?.none, Tracer(name: "inner")))
        let calls = Locked(0)
        func handler(_ request: HTTPRequest, _ context: inout APIRequestContext) -> HTTPResponse? {
            calls.withLock { $0 += 1 }
            context.pattern = "/routed/{id}"
            return request.method == "GET" ? HTTPResponse(status: 200) : nil
        }
        var context = APIRequestContext(Self.context)
        let waited = await chain.respond(to: Self.request("GET", "/routed/1"), context: &context) { request, context in handler(request, &context)! }
        #expect(waited.headers.values("Trace") == ["inner /routed/{id}", "outer /routed/{id}"])
        context = APIRequestContext(Self.context)
        let now = chain.respondNow(to: Self.request("GET", "/routed/1"), context: &context) { request, context in handler(request, &context) }
        #expect(now?.headers.values("Trace") == ["inner /routed/{id}", "outer /routed/{id}"])
        context = APIRequestContext(Self.context)
        #expect(chain.respondNow(to: Self.request("PUT", "/routed/1"), context: &context) { request, context in handler(request, &context) } == nil)
        #expect(calls.withLock { $0 } == 3)
        let answering = MiddlewarePair(Tracer(name: "outer"), Tracer(name: "gate", answers: true))
        context = APIRequestContext(Self.context)
        let gated = await answering.respond(to: Self.request("GET", "/routed/1"), context: &context) { request, context in handler(request, &context)!
        }
        #expect(gated.status == 418 && gated.headers.values("Trace") == ["gate", "outer unmatched"])
        #expect(calls.withLock { $0 } == 3, "the handler never ran")
    }
}
