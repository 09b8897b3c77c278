import Dispatch

/// The REST API v1 of API.md: routes, authentication, errors, CORS, metrics and access logs.
/// `main` and the tests build it the same way, through `init`.
public final class TabStoreAPI: HTTPResponder {
    let store: any TabStoreBackend
    let configuration: APIConfiguration
    let serverState: ServerState
    public let metrics: Metrics
    let logger: Logger
    let apps: AppCache
    let tokens = TokenCache()
    /// Built once in `init`, never changed.
    private(set) nonisolated(unsafe) var router = Router(routes: [])
    let adminTokenDigest: [UInt8]?

    public init(store: any TabStoreBackend, configuration: APIConfiguration, serverState: ServerState = ServerState(),
                metrics: Metrics = Metrics(), logger: Logger = .silent) {
        self.store = store
        self.configuration = configuration
        self.serverState = serverState
        self.metrics = metrics
        self.logger = logger
        self.apps = AppCache(store: store)
        self.adminTokenDigest = configuration.adminToken.map { Crypto.sha256(Array($0.utf8)) }
        var builder = Router.Builder()
        registerRoutes(&builder)
        router = builder.build()
    }

    private func registerRoutes(_ builder: inout Router.Builder) {
        builder.add("GET", "/healthz", inline: { [unowned self] in self.healthz($0, $1) }) { [unowned self] in self.healthz($0, $1) }
        builder.add("GET", "/readyz") { [unowned self] in try await self.readyz($0, $1) }
        builder.add("GET", "/metrics") { [unowned self] in try await self.metricsText($0, $1) }
        builder.add("GET", "/openapi.yaml", inline: { [unowned self] in self.openAPI($0, $1) }) { [unowned self] in self.openAPI($0, $1) }
        builder.add("POST", "/v1/apps") { [unowned self] in try await self.createApp($0, $1) }
        builder.add("GET", "/v1/apps") { [unowned self] in try await self.listApps($0, $1) }
        builder.add("GET", "/v1/apps/{appId}") { [unowned self] in try await self.getApp($0, $1) }
        builder.add("DELETE", "/v1/apps/{appId}") { [unowned self] in try await self.deleteApp($0, $1) }
        builder.add("POST", "/v1/apps/{appId}/signing-secret") { [unowned self] in try await self.rotateSecret($0, $1) }
        builder.add("PUT", "/v1/apps/{appId}/schema") { [unowned self] in try await self.putSchema($0, $1) }
        builder.add("GET", "/v1/apps/{appId}/schema") { [unowned self] in try await self.getSchema($0, $1) }
        builder.add("GET", "/v1/apps/{appId}/schema/versions/{version}") { [unowned self] in try await self.getSchemaVersion($0, $1) }
        builder.add("GET", "/v1/apps/{appId}/stats") { [unowned self] in try await self.stats($0, $1) }
        builder.add("GET", "/v1/apps/{appId}/users/{userId}/customization", inline: { [unowned self] in try self.getCustomizationInline($0, $1) }) {
            [unowned self] in try await self.getCustomization($0, $1)
        }
        builder.add("PUT", "/v1/apps/{appId}/users/{userId}/customization") { [unowned self] in try await self.putCustomization($0, $1) }
        builder.add("PATCH", "/v1/apps/{appId}/users/{userId}/customization") { [unowned self] in try await self.patchCustomization($0, $1) }
        builder.add("DELETE", "/v1/apps/{appId}/users/{userId}/customization") { [unowned self] in try await self.deleteCustomization($0, $1) }
        builder.add("GET", "/v1/apps/{appId}/users/{userId}/layout", inline: { [unowned self] in try self.layoutInline($0, $1) }) {
            [unowned self] in try await self.layout($0, $1)
        }
    }

    // MARK: - The one place requests become responses

    public func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        var pattern = "unmatched"
        var response: HTTPResponse
        do {
            if request.method == "OPTIONS" {
                (pattern, response) = try preflight(request)
            } else {
                switch router.match(method: request.method, path: request.head.path) {
                case .found(let route, let parameters):
                    pattern = route.pattern
                    response = try await route.handler(request, RouteContext(parameters: parameters, requestId: context.requestId, pattern: pattern))
                case .methodNotAllowed(let allowed):
                    throw APIError.methodNotAllowed(allowed + ["OPTIONS"])
                case .notFound:
                    throw APIError.notFound("no-route", "no resource at \(request.head.path)")
                case .badPath:
                    throw APIError.badRequest("invalid-path", "the path has an invalid percent-encoding")
                }
            }
        } catch {
            response = problem(for: error, requestId: context.requestId)
        }
        return finish(request, context, pattern: pattern, response)
    }

    /// Answers GETs whose data is in memory or one point read away, on the event loop (see `HTTPResponder`).
    public func respondInline(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD",
              case .found(let route, let parameters) = router.match(method: request.method, path: request.head.path),
              let inline = route.inline
        else { return nil }
        let response: HTTPResponse
        do {
            guard let answer = try inline(request, RouteContext(parameters: parameters, requestId: context.requestId, pattern: route.pattern)) else {
                return nil
            }
            response = answer
        } catch {
            response = problem(for: error, requestId: context.requestId)
        }
        return finish(request, context, pattern: route.pattern, response)
    }

    /// CORS, metrics and the access log: the same for every answer.
    private func finish(_ request: HTTPRequest, _ context: RequestContext, pattern: String, _ answer: HTTPResponse) -> HTTPResponse {
        var response = answer
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
        case StoreConflict.revisionMismatch(let current): return APIError.preconditionFailed(current: current).response()
        case StoreConflict.notFound: return APIError.notFound("app-not-found", "no such app").response()
        case StoreConflict.alreadyExists: return APIError(status: 409, slug: "already-exists", title: "Conflict", detail: "it already exists").response()
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
        if configuration.allowedOrigins.contains("*") || configuration.allowedOrigins.contains(origin) { return origin }
        return nil
    }

    private func addCORS(_ request: HTTPRequest, _ response: inout HTTPResponse) {
        guard let origin = allowedOrigin(request) else { return }
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Vary", "Origin")
        response.headers.add("Access-Control-Expose-Headers", "ETag, Location, X-Request-ID, WWW-Authenticate, Allow")
    }

    /// `OPTIONS`: a CORS preflight, or the methods a path allows.
    private func preflight(_ request: HTTPRequest) throws -> (String, HTTPResponse) {
        let allowed: [String]
        switch router.match(method: "OPTIONS", path: request.head.path) {
        case .methodNotAllowed(let methods): allowed = methods + ["OPTIONS"]
        case .found: allowed = ["OPTIONS"]
        case .notFound: throw APIError.notFound("no-route", "no resource at \(request.head.path)")
        case .badPath: throw APIError.badRequest("invalid-path", "the path has an invalid percent-encoding")
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

    // MARK: - Shared helpers

    /// Parses a JSON request body after checking its media type.
    /// - Throws: `APIError` 415 for another content type, 400 for invalid JSON.
    func jsonBody(_ request: HTTPRequest) throws -> JSONValue {
        let contentType = request.headers["Content-Type"]?.split(separator: ";").first?.trimmingOWS().lowercased()
        guard contentType == "application/json" else {
            throw APIError(status: 415, slug: "unsupported-media-type", title: "Unsupported media type",
                           detail: "send the body as application/json")
        }
        do {
            return try JSONParser.parse(request.body)
        } catch {
            throw APIError(status: 400, slug: "malformed-json", title: "Malformed JSON",
                           detail: "invalid JSON at byte \(error.offset): \(error.message)")
        }
    }

    func json(_ status: Int, _ value: JSONValue, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        json(status, JSONWriter.bytes(value), headers: headers)
    }

    func json(_ status: Int, _ body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.add("Content-Type", "application/json")
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// Point reads that can be answered without waiting, when the backend offers them.
    var pointReads: (any SynchronousPointReads)? { store as? any SynchronousPointReads }

    /// The app named in the path, or 404.
    func requireApp(_ context: RouteContext) async throws -> AppCache.Entry {
        let appId = context.parameter("appId")
        guard Identifiers.isValidAppId(appId), let entry = try await apps.entry(appId) else {
            throw APIError.notFound("app-not-found", "no app \"\(appId)\"")
        }
        return entry
    }

    /// The app's current schema, or 404 when none was registered yet.
    func requireSchema(_ entry: AppCache.Entry) throws -> SchemaIndex {
        guard let schema = entry.schema else {
            throw APIError.notFound("no-schema", "app \"\(entry.app.id)\" has no schema yet; register one with PUT /v1/apps/\(entry.app.id)/schema")
        }
        return schema
    }
}
