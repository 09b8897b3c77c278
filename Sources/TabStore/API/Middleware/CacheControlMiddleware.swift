import TabStoreHTTP

/// Every answer says how it may be cached: those that did not choose (operator reads, writes, 204s,
/// preflights, refusals) are `no-store`; validators and `private, no-cache` stay where a route set them.
struct CacheControlMiddleware: ResponseMiddleware {
    func handle(_ response: inout HTTPResponse, for request: HTTPRequest, context: APIRequestContext) {
        if response.headers["Cache-Control"] == nil { response.headers.add("Cache-Control", "no-store") }
    }
}
