import Dispatch
import TabStoreHTTP

/// What the middleware knows of one request: the server's id and arrival time, and the route pattern once
/// routing found one.
struct APIRequestContext: Sendable {
    let requestId: String
    /// Monotonic nanoseconds when the request was complete; for `admit`, when its head was.
    let receivedAt: UInt64
    /// Set by routing: the matched route's pattern, `OPTIONS` for an answered OPTIONS, else `unmatched`.
    /// Metrics and logs name this, never the raw path (a client picks the path: unbounded cardinality).
    var pattern = "unmatched"
    /// Set by routing once an operator's token was checked: its name, for the access log (never the token).
    var operatorName: String?

    init(_ context: RequestContext) {
        requestId = context.requestId
        receivedAt = context.receivedAt
    }

    /// Seconds from `receivedAt` to now.
    func elapsedSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds &- receivedAt) / 1e9
    }
}

/// A step wrapped around the rest of the chain (CORS, metrics, the access log): it sees each request on its
/// way in and its answer on its way out, and may answer without calling `next`.
///
/// Two entries, because `APIResponder` answers two ways: `respond` may wait; `respondNow` runs on the
/// event loop (`respondInline`, `admit`), where nil from `next` means "no answer now": it passes through
/// unseen, and the request is answered (and counted, logged) later, through `respond`.
/// `next` is a non-escaping closure and chains are built once (`MiddlewarePair`), so a request pays no
/// allocation for the middleware.
protocol APIMiddleware: Sendable {
    func respond(to request: HTTPRequest, context: inout APIRequestContext,
                 next: (HTTPRequest, inout APIRequestContext) async -> HTTPResponse) async -> HTTPResponse

    func respondNow(to request: HTTPRequest, context: inout APIRequestContext,
                    next: (HTTPRequest, inout APIRequestContext) -> HTTPResponse?) -> HTTPResponse?
}

/// A middleware that only acts on the answer on its way out, after the inner chain made it: one method
/// serves both entries.
protocol ResponseMiddleware: APIMiddleware {
    func handle(_ response: inout HTTPResponse, for request: HTTPRequest, context: APIRequestContext)
}

extension ResponseMiddleware {
    func respond(to request: HTTPRequest, context: inout APIRequestContext,
                 next: (HTTPRequest, inout APIRequestContext) async -> HTTPResponse) async -> HTTPResponse {
        var response = await next(request, &context)
        handle(&response, for: request, context: context)
        return response
    }

    func respondNow(to request: HTTPRequest, context: inout APIRequestContext,
                    next: (HTTPRequest, inout APIRequestContext) -> HTTPResponse?) -> HTTPResponse? {
        guard var response = next(request, &context) else { return nil }
        handle(&response, for: request, context: context)
        return response
    }
}

/// `outer` wrapped around `inner`: a chain is nested pairs, its type fixed when it is built, so calls
/// through it are direct (no existential, no array of closures).
struct MiddlewarePair<Outer: APIMiddleware, Inner: APIMiddleware>: APIMiddleware {
    let outer: Outer
    let inner: Inner

    init(_ outer: Outer, _ inner: Inner) {
        self.outer = outer
        self.inner = inner
    }

    func respond(to request: HTTPRequest, context: inout APIRequestContext,
                 next: (HTTPRequest, inout APIRequestContext) async -> HTTPResponse) async -> HTTPResponse {
        await outer.respond(to: request, context: &context) { request, context in
            await inner.respond(to: request, context: &context, next: next)
        }
    }

    func respondNow(to request: HTTPRequest, context: inout APIRequestContext,
                    next: (HTTPRequest, inout APIRequestContext) -> HTTPResponse?) -> HTTPResponse? {
        outer.respondNow(to: request, context: &context) { request, context in
            inner.respondNow(to: request, context: &context, next: next)
        }
    }
}

/// A middleware the configuration turned off (nil) passes every request straight on.
extension Optional: APIMiddleware where Wrapped: APIMiddleware {
    func respond(to request: HTTPRequest, context: inout APIRequestContext,
                 next: (HTTPRequest, inout APIRequestContext) async -> HTTPResponse) async -> HTTPResponse {
        guard let middleware = self else { return await next(request, &context) }
        return await middleware.respond(to: request, context: &context, next: next)
    }

    func respondNow(to request: HTTPRequest, context: inout APIRequestContext,
                    next: (HTTPRequest, inout APIRequestContext) -> HTTPResponse?) -> HTTPResponse? {
        guard let middleware = self else { return next(request, &context) }
        return middleware.respondNow(to: request, context: &context, next: next)
    }
}

/// The API's middleware, outermost first. The access log and metrics see every answer as it leaves (handler
/// answers, problems, refusals from `admit`, OPTIONS), under its route pattern; CORS headers go on every one
/// of them; the `Cache-Control` default goes on first, where no route chose one.
enum APIMiddlewareStack {
    typealias Standard = MiddlewarePair<
        AccessLogMiddleware?, MiddlewarePair<MetricsMiddleware, MiddlewarePair<CORSMiddleware?, CacheControlMiddleware>>
    >

    static func standard(_ services: APIServices) -> Standard {
        MiddlewarePair(
            AccessLogMiddleware(services.configuration, logger: services.logger),
            MiddlewarePair(
                MetricsMiddleware(metrics: services.metrics),
                MiddlewarePair(CORSMiddleware(allowedOrigins: services.configuration.allowedOrigins), CacheControlMiddleware())
            )
        )
    }
}
