import Dispatch
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport

/// The REST API v1 of API.md: routes, authentication, errors, CORS, metrics and access logs.
/// `main` and the tests build it the same way, through `init`.
package final class APIResponder: HTTPResponder {
    /// Built outside (`APIRoutes.router`), never changed.
    package let router: Router
    package let metrics: Metrics
    let services: APIServices
    /// Enforces each route's declared access, one step before its handler (and alone in `admit`).
    let authenticator: Authenticator
    var configuration: APIConfiguration { services.configuration }
    var logger: Logger { services.logger }

    package convenience init(store: any TabStoreBackend, configuration: APIConfiguration, serverState: ServerState = ServerState(),
                             metrics: Metrics = Metrics(), logger: Logger = .silent) {
        let services = APIServices(store: store, configuration: configuration, serverState: serverState, metrics: metrics, logger: logger)
        self.init(services: services, router: APIRoutes.router(services))
    }

    /// Serves `router`, whose handlers were made with the same `services`.
    init(services: APIServices, router: Router) {
        self.services = services
        self.router = router
        self.metrics = services.metrics
        self.authenticator = Authenticator(services)
    }

    // MARK: - The one place requests become responses

    package func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        var pattern = "unmatched"
        var response: HTTPResponse
        do {
            if request.method == "OPTIONS" {
                (pattern, response) = try preflight(request)
            } else {
                let (route, parameters) = try route(for: request.head)
                pattern = route.pattern
                let routeContext = RouteContext(parameters: parameters, requestId: context.requestId, pattern: pattern)
                // The same check `admit` made before the body; repeated here for callers that skip the server (tests).
                try await authenticator.authorize(route.access, request.head, routeContext)
                response = try await route.handler(request, routeContext)
            }
        } catch {
            response = problem(for: error, requestId: context.requestId)
        }
        return finish(request, context, pattern: pattern, response)
    }

    /// Refuses from the head alone, before the server reads a body: unknown routes and methods, missing or
    /// invalid credentials, invalid path ids and callers the route's access does not admit.
    /// Answers nil (go on) when the decision needs waiting for storage; `respond` decides then.
    package func admit(_ head: HTTPRequestHead, context: RequestContext) -> HTTPResponse? {
        guard head.method != "OPTIONS" else { return nil }
        var pattern = "unmatched"
        let response: HTTPResponse
        do {
            let (route, parameters) = try route(for: head)
            pattern = route.pattern
            // Whether decided now (admitted) or left to `respond` (needs storage), the request goes on.
            _ = try authenticator.authorizeNow(route.access, head, RouteContext(parameters: parameters, requestId: context.requestId, pattern: pattern))
            return nil
        } catch {
            response = problem(for: error, requestId: context.requestId)
        }
        return finish(HTTPRequest(head: head, body: []), context, pattern: pattern, response)
    }

    /// Answers GETs whose data is in memory or one point read away, on the event loop (see `HTTPResponder`).
    package func respondInline(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD",
              case .found(let route, let parameters) = router.match(method: request.method, path: request.head.path),
              let inline = route.inline
        else { return nil }
        let routeContext = RouteContext(parameters: parameters, requestId: context.requestId, pattern: route.pattern)
        let response: HTTPResponse
        do {
            guard try authenticator.authorizeNow(route.access, request.head, routeContext), let answer = try inline(request, routeContext) else {
                return nil
            }
            response = answer
        } catch {
            response = problem(for: error, requestId: context.requestId)
        }
        return finish(request, context, pattern: route.pattern, response)
    }

    /// The route for a request head.
    /// - Throws: `APIError` 404 (no route), 405 (with `Allow`), 400 (bad percent-encoding).
    private func route(for head: HTTPRequestHead) throws -> (Router.Route, [String: String]) {
        // A method no resource here implements is 501, whatever the path (RFC 9110 §9.1); 405 is for known
        // methods a path lacks.
        guard Self.implementedMethods.contains(head.method) else { throw APIError.notImplemented(head.method) }
        switch router.match(method: head.method, path: head.path) {
        case .found(let route, let parameters): return (route, parameters)
        case .methodNotAllowed(let allowed): throw APIError.methodNotAllowed(allowed + ["OPTIONS"])
        case .notFound: throw APIError.notFound(.noRoute, "no resource at this path")
        case .badPath: throw APIError.badRequest(.invalidPath, "the path has an invalid percent-encoding")
        }
    }

    /// The methods some route (or CORS) implements; the same set metrics label by name.
    static let implementedMethods: Set<String> = Metrics.knownMethods

    /// CORS, metrics and the access log: the same for every answer.
    private func finish(_ request: HTTPRequest, _ context: RequestContext, pattern: String, _ answer: HTTPResponse) -> HTTPResponse {
        var response = answer
        // Every answer says how it may be cached: those that did not choose (operator reads, writes, 204s,
        // preflights) are `no-store`; validators and `private, no-cache` stay where a route set them.
        if response.headers["Cache-Control"] == nil { response.headers.add("Cache-Control", "no-store") }
        addCORS(request, &response)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds &- context.receivedAt) / 1e9
        metrics.recordRequest(route: pattern, method: request.method, status: response.status, seconds: seconds)
        if configuration.accessLog {
            logger.info("request", [
                ("method", .string(Metrics.methodLabel(request.method))), ("route", .string(pattern)), ("status", .integer(response.status)),
                ("bytes", .integer(response.body.count)), ("durationMs", .number((seconds * 1e6).rounded() / 1e3)),
                ("requestId", .string(context.requestId)),
            ])
        }
        return response
    }

    private func problem(for error: any Error, requestId: String) -> HTTPResponse {
        switch error {
        case let error as APIError: return error.response()
        case let error as MalformedDocument: return APIError.malformed(error).response()
        case let error as RuleRefusal: return APIError.refused(error).response()
        case StoreConflict.revisionMismatch(let current):
            return APIError.preconditionFailed(current: nil, detail: "it is at revision \(current) now; read it again and retry").response()
        case StoreConflict.notFound: return APIError.notFound(.appNotFound, "no such app").response()
        case let error as JSONParser.Failure:
            // A stored document that does not parse: our bug or the disk's, logged without its content.
            logger.error("stored_document_unreadable", [("requestId", .string(requestId)), ("offset", .integer(error.offset))])
            return APIError.internalError(requestId: requestId).response()
        case StoreConflict.alreadyExists: return APIError(status: 409, slug: .alreadyExists, title: "Conflict", detail: "it already exists").response()
        case let error as StorageError where error.isUnavailable:
            // Not our bug: the disk is full or read-only. 503 + Retry-After; /readyz reports it until a write succeeds.
            logger.error("storage_unavailable", [("requestId", .string(requestId)), ("code", .integer(Int(error.extendedCode))),
                                                 ("error", .string(error.message))])
            return APIError.storageUnavailable(error).response()
        default:
            // Our bug or the disk's: the client gets a request id, the log gets the details (never bodies).
            logger.error("handler_failed", [("requestId", .string(requestId)), ("error", .string(String(describing: error)))])
            return APIError.internalError(requestId: requestId).response()
        }
    }

    // MARK: - CORS (browser clients)

    private func allowedOrigin(_ request: HTTPRequest) -> String? {
        guard let origin = request.headers["Origin"], !configuration.allowedOrigins.isEmpty else { return nil }
        // Origins compared by their bytes, like every other identity (see `Identifier`).
        if configuration.allowedOrigins.contains("*") || configuration.allowedOrigins.contains(where: { Identifier($0) == Identifier(origin) }) { return origin }
        return nil
    }

    private func addCORS(_ request: HTTPRequest, _ response: inout HTTPResponse) {
        guard !configuration.allowedOrigins.isEmpty else { return }
        // The answer depends on Origin whenever CORS is on, also for a request without one: a cache must not
        // serve an answer stored for a request without Origin (no Access-Control-Allow-Origin) to a browser.
        response.headers.add("Vary", "Origin")
        guard let origin = allowedOrigin(request) else { return }
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Access-Control-Expose-Headers", "ETag, Location, X-Request-ID, WWW-Authenticate, Allow")
    }

    /// `OPTIONS`: a CORS preflight, or the methods a path allows.
    private func preflight(_ request: HTTPRequest) throws -> (String, HTTPResponse) {
        let allowed: [String]
        switch router.match(method: "OPTIONS", path: request.head.path) {
        case .methodNotAllowed(let methods): allowed = methods + ["OPTIONS"]
        case .found: allowed = ["OPTIONS"]
        case .notFound: throw APIError.notFound(.noRoute, "no resource at this path")
        case .badPath: throw APIError.badRequest(.invalidPath, "the path has an invalid percent-encoding")
        }
        var response = HTTPResponse(status: 204)
        response.headers.add("Allow", allowed.joined(separator: ", "))
        if allowedOrigin(request) != nil, request.headers["Access-Control-Request-Method"] != nil {
            response.headers.add("Access-Control-Allow-Methods", allowed.joined(separator: ", "))
            response.headers.add("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match, If-None-Match, X-Request-ID")
            response.headers.add("Access-Control-Max-Age", "600")
        }
        return ("OPTIONS", response)
    }
}
