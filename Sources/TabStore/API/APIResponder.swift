import TabStoreApplication
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// The REST API v1 (docs/api.md, openapi.yaml), as the server sees it. A request flows through the middleware
/// (`APIMiddlewareStack`: access log, metrics, CORS, the `Cache-Control` default) into the
/// `RouteDispatcher` (route, access check by the `Authenticator`, handler, problem documents); the
/// handlers live in one route group per resource, assembled into the router by `APIRoutes`.
/// `main` and the tests build it the same way, through `init`.
package final class APIResponder: HTTPResponder {
    /// Built outside (`APIRoutes.router`), never changed.
    package let router: Router
    package let metrics: Metrics
    private let dispatcher: RouteDispatcher
    /// Built once, here: a request pays no allocation for it.
    private let middleware: APIMiddlewareStack.Standard
    /// Long polls and change-feed streams.
    private let changes: ChangeHub
    /// What the routes share (tests reach the replica notifications through it).
    let services: APIServices
    /// Admission of history pages and exports (tests watch its bounds).
    let historyReads: HistoryReads
    /// Rendered history pages (tests compare hits and misses).
    let historyPages: ByteBoundedCache<[UInt8]>

    package convenience init(store: any TabStoreBackend, configuration: APIConfiguration, serverState: ServerState = ServerState(),
                             metrics: Metrics = Metrics(), logger: Logger = .silent) {
        let services = APIServices(store: store, configuration: configuration, serverState: serverState, metrics: metrics, logger: logger)
        self.init(services: services, router: APIRoutes.router(services))
    }

    /// Serves `router`, whose handlers were made with the same `services`.
    init(services: APIServices, router: Router) {
        self.router = router
        self.metrics = services.metrics
        self.dispatcher = RouteDispatcher(router: router, authenticator: Authenticator(services), logger: services.logger,
                                          store: services.store, auditRetention: services.configuration.auditRetention)
        self.middleware = APIMiddlewareStack.standard(services)
        self.changes = services.changes
        self.services = services
        self.historyReads = services.historyReads
        self.historyPages = services.historyPages
    }

    /// Open change-feed streams and waiting long polls.
    package var followers: (streams: Int, longPolls: Int) { changes.counts }

    /// The server is about to drain: waiting long polls answer now, and no new one or stream starts waiting.
    package func startDraining() {
        changes.drain()
    }

    package func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        var context = APIRequestContext(context)
        return await middleware.respond(to: request, context: &context) { request, context in
            await dispatcher.respond(to: request, context: &context)
        }
    }

    /// Refuses from the head alone, before the server reads a body: unknown routes and methods, missing or
    /// invalid credentials, invalid path ids and callers the route's access does not admit.
    /// Answers nil (go on) when the decision needs waiting for storage; `respond` decides then.
    package func admit(_ head: HTTPRequestHead, context: RequestContext) -> HTTPResponse? {
        var context = APIRequestContext(context)
        // The middleware sees the head as a request without a body (none was read).
        return middleware.respondNow(to: HTTPRequest(head: head, body: []), context: &context) { request, context in
            dispatcher.admit(request.head, context: &context)
        }
    }

    /// `urn:tabstore:problem:draining`, what `/readyz` says while draining, with `Retry-After: 1`, through the
    /// middleware (logged, counted under the route's pattern, CORS headers), for every route.
    package func drainingResponse(to head: HTTPRequestHead, context: RequestContext) -> HTTPResponse {
        var context = APIRequestContext(context)
        return middleware.respondNow(to: HTTPRequest(head: head, body: []), context: &context) { request, context in
            dispatcher.draining(request.head, context: &context)
        } ?? APIError.draining.response()
    }

    /// Answers GETs whose data is in memory or one point read away, on the event loop (see `HTTPResponder`).
    package func respondInline(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        var context = APIRequestContext(context)
        return middleware.respondNow(to: request, context: &context) { request, context in
            dispatcher.respondInline(to: request, context: &context)
        }
    }
}
