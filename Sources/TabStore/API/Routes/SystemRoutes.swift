import TabStoreAssets
import TabStoreAuth
import TabStoreHTTP
import TabStoreSupport
import TabStoreStore
/// Probes, metrics and the API description.
struct SystemRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("GET", "/healthz", access: .anyone, body: .empty, inline: healthz, healthz)
        builder.add("GET", "/readyz", access: .anyone, body: .empty, readyz)
        builder.add("GET", "/metrics", access: .metrics, body: .empty, metricsText)
        builder.add("GET", "/openapi.yaml", access: .anyone, body: .empty, inline: openAPI, openAPI)
    }

    /// Probes and metrics describe this instant: never stored by a cache.
    private static let noStore = HTTPHeaders([("Cache-Control", "no-store")])

    func healthz(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        .json(200, ["status": "ok"], headers: Self.noStore)
    }

    func readyz(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        if services.serverState.isDraining { throw APIError.draining }
        guard await services.store.ping() else {
            var error = APIError(status: 503, slug: .databaseUnavailable, title: "Service unavailable", detail: "the database does not answer")
            error.headers.add("Retry-After", String(StorePolicy.retryAfterSeconds))
            throw error
        }
        if let failure = await services.store.writeFailure() {
            throw APIError.storageUnavailable(failure)
        }
        return .json(200, ["status": "ready"], headers: Self.noStore)
    }

    func metricsText(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let (streams, longPolls) = services.changes.counts
        var gauges = Metrics.Gauges(customizations: try await services.store.customizationCount(),
                                    historyRows: try await services.store.historyCount(), streams: streams, longPolls: longPolls)
        if let records = services.store.recordCacheStatistics { gauges.caches.append(("customizations", records)) }
        gauges.caches.append(("representations", services.representations.statistics))
        gauges.caches.append(("documents", services.documents.statistics))
        gauges.caches.append(("tokens", services.tokens.statistics))
        gauges.caches.append(("historyPages", services.historyPages.statistics))
        gauges.backend = await services.store.backendGauges()
        let text = services.metrics.render(gauges)
        return HTTPResponse(
            status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")]),
                            body: Array(text.utf8))
    }

    /// The served API description and its strong ETag (the first 128 bits of its SHA-256, hex), computed once.
    static let openAPIBody = EmbeddedFiles.openAPI
    static let openAPITag = EntityTag(Crypto.sha256(openAPIBody).prefix(16).map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }.joined())

    func openAPI(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse {
        // `public` adds nothing without Authorization (RFC 9111 §5.2.2.9).
        let headers = Preconditions.validatorHeaders(Self.openAPITag, cacheControl: "max-age=300")
        if let early = try Preconditions.earlyAnswer(to: request, etag: Self.openAPITag, headers: headers) { return early }
        var answer = headers
        answer.add("Content-Type", "application/yaml")
        return HTTPResponse(status: 200, headers: answer, body: Self.openAPIBody)
    }
}
