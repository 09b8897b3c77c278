import TabStoreHTTP
import TabStoreSupport

/// CORS for browser clients (the Fetch standard's CORS protocol) on every answer of the API: handler
/// answers, problems, refusals made from the head alone, and OPTIONS, where a preflight from an allowed
/// origin also gets the `Access-Control-Allow-*` headers for the methods the answer's `Allow` lists.
struct CORSMiddleware: ResponseMiddleware {
    /// Compared by their bytes, like every other identity (see `Identifier`).
    private let origins: [Identifier]
    private let anyOrigin: Bool

    static let exposedHeaders = "ETag, Location, X-Request-ID, WWW-Authenticate, Allow, Idempotent-Replayed, Retry-After"
    static let allowedHeaders = "Authorization, Content-Type, If-Match, If-None-Match, X-Request-ID, Idempotency-Key, Last-Event-ID"

    /// nil when no origin is allowed: CORS is off, and the chain skips it.
    init?(allowedOrigins: [String]) {
        guard !allowedOrigins.isEmpty else { return nil }
        origins = allowedOrigins.map { Identifier($0) }
        anyOrigin = allowedOrigins.contains("*")
    }

    /// The request's `Origin` when it is allowed.
    private func allowedOrigin(_ request: HTTPRequest) -> String? {
        guard let origin = request.headers["Origin"] else { return nil }
        return anyOrigin || origins.contains(Identifier(origin)) ? origin : nil
    }

    func handle(_ response: inout HTTPResponse, for request: HTTPRequest, context: APIRequestContext) {
        let origin = allowedOrigin(request)
        if origin != nil, request.method == "OPTIONS", (200..<300).contains(response.status),
           request.headers["Access-Control-Request-Method"] != nil, let allowed = response.headers["Allow"] {
            response.headers.add("Access-Control-Allow-Methods", allowed)
            response.headers.add("Access-Control-Allow-Headers", Self.allowedHeaders)
            response.headers.add("Access-Control-Max-Age", "600")
        }
        // The answer depends on Origin whenever CORS is on, also for a request without one: a cache must not
        // serve an answer stored for a request without Origin (no Access-Control-Allow-Origin) to a browser.
        response.headers.add("Vary", "Origin")
        guard let origin else { return }
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Access-Control-Expose-Headers", Self.exposedHeaders)
    }
}
