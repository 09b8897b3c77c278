import Dispatch
import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// The innermost step, inside the middleware: finds the route (501, 405 with `Allow`, 404, 400), answers
/// OPTIONS, has the authenticator enforce the route's declared access, then calls the handler. Every
/// error becomes a problem document here, the one place, so the middleware only ever sees answers.
struct RouteDispatcher: Sendable {
    let router: Router
    let authenticator: Authenticator
    let logger: Logger
    /// Where the audit log goes (`record`), and how many entries it keeps.
    let store: any TabStoreBackend
    let auditRetention: Int

    /// The methods some route (or OPTIONS) implements; the same set metrics label by name.
    static let implementedMethods: Set<String> = Metrics.knownMethods

    /// A path's token name or version as the audit log keeps it: at most 64 bytes, no control characters (a NUL
    /// from the path is not stored); nil otherwise.
    static func auditTarget(_ text: String) -> String? {
        guard text.utf8.count <= 64, !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else { return nil }
        return text
    }

    /// Audit entries waiting to be stored again after a failure, over every dispatcher; bounded by `maxAuditRetries`.
    private static let auditRetries = Locked(0)
    static let maxAuditRetries = 1_024

    func respond(to request: HTTPRequest, context: inout APIRequestContext) async -> HTTPResponse {
        // The database work of this request, however many calls, ends within one bound from its arrival.
        let arrivedAt = context.receivedAt
        var routed = context
        let response = await RequestDeadline.$arrivedAt.withValue(arrivedAt) { await respondRouted(to: request, context: &routed) }
        context = routed
        return response
    }

    private func respondRouted(to request: HTTPRequest, context: inout APIRequestContext) async -> HTTPResponse {
        do {
            if request.method == "OPTIONS" {
                let response = try options(request.head)
                context.pattern = "OPTIONS"
                return response
            }
            let (route, parameters) = try route(for: request.head)
            context.pattern = route.pattern
            var routeContext = RouteContext(parameters: parameters, requestId: context.requestId, pattern: route.pattern)
            // The same check `admit` made before the body; repeated here for callers that skip the server (tests).
            let principal: Principal?
            do {
                principal = try await authenticator.authorize(route.access, request.head, routeContext)
            } catch {
                auditRefused(request.head, pattern: route.pattern, parameters: parameters, requestId: context.requestId, error)
                throw error
            }
            routeContext.credentialsExpireAt = principal?.expiresAt
            routeContext.credentialsKey = principal?.secret
            routeContext.operatorName = principal?.operatorName
            routeContext.revocableOperatorName = principal?.revocableOperatorName
            context.operatorName = principal?.operatorName
            let response: HTTPResponse
            do {
                response = try await route.handler(request, routeContext)
            } catch {
                response = problem(for: error, requestId: context.requestId)
            }
            await record(request, routeContext, status: response.status, created: createdParameters(response))
            return response
        } catch {
            return problem(for: error, requestId: context.requestId)
        }
    }

    /// The audit log: every operator write (any method but GET and HEAD, dry runs included) and every export of a
    /// user's data (exports and erases are the operator's only), with its answer's status. A failure to record is
    /// logged; the answer stands (what it did is done).
    private func record(_ request: HTTPRequest, _ context: RouteContext, status: Int, created: [String: String] = [:]) async {
        guard let actor = context.operatorName else { return }
        let parameters = context.parameters.merging(created) { fromPath, _ in fromPath }
        let isRead = request.method == "GET" || request.method == "HEAD"
        guard !isRead || context.pattern.hasSuffix("/export") else { return }
        // A rehearsal says so: a dry run's 200 is not a registration's.
        let action = "\(request.method) \(context.pattern)" + (request.queryParameter("dryRun") == "true" ? "?dryRun=true" : "")
        let entry = AuditEntry(at: Timestamp.now(), actor: actor, action: action, appId: parameters["appId"],
            userId: parameters["userId"],
            target: (parameters["name"] ?? parameters["version"]).flatMap { Self.auditTarget($0) },
                               requestId: context.requestId, status: status)
        // First within what is left of the request's bound, so the answer is never held past it. An entry that
        // could not be stored then (a stalled disk or database, or a request whose database work took the whole
        // bound) is tried again in the background, each time with a bound of its own, a few times (at most
        // `Self.maxAuditRetries` entries wait at once), then logged.
        let store = self.store, keep = auditRetention, logger = self.logger
        if (try? await store.appendAudit(entry, keep: keep)) != nil { return }
        let append: @Sendable () async -> Bool = {
            await RequestDeadline.$arrivedAt.withValue(DispatchTime.now().uptimeNanoseconds) {
                (try? await store.appendAudit(entry, keep: keep)) != nil
            }
        }
        guard Self.auditRetries.withLock({ waiting in
            guard waiting < Self.maxAuditRetries else { return false }
            waiting += 1
            return true
        }) else {
            logger.warning("audit_not_recorded", [("route", .string(context.pattern)), ("requestId", .string(context.requestId))])
            return
        }
        let (pattern, requestId) = (context.pattern, context.requestId)
        Task.detached {
            defer { Self.auditRetries.withLock { $0 -= 1 } }
            for delay in [1, 2, 4, 8] {
                try? await Task.sleep(for: .seconds(delay))
                if await append() { return }
            }
            logger.warning("audit_not_recorded", [("route", .string(pattern)), ("requestId", .string(requestId))])
        }
    }

    /// The path parameters of what a write created, read from its 201's `Location` as the routes that read or
    /// delete it would, so the audit log names what a POST or a schema PUT made (the app's id, the token's name,
    /// the schema's version) as it names what a DELETE took away.
    private func createdParameters(_ response: HTTPResponse) -> [String: String] {
        guard response.status == 201, let location = response.headers["Location"] else { return [:] }
        for method in ["GET", "DELETE"] {
            if case .found(_, let parameters) = router.match(method: method, path: Substring(location)) { return parameters }
        }
        return [:]
    }

    /// An operator's write refused before its handler ran (403: a read-scope token's write; 404: an app that does
    /// not exist) is audited too, with its status, once the caller is known (in the background: the refusal is
    /// answered now).
    private func auditRefused(_ head: HTTPRequestHead, pattern: String, parameters: [String: String], requestId: String, _ error: any Error) {
        guard head.method != "GET", head.method != "HEAD", let status = (error as? APIError)?.status, status == 403 || status == 404 else { return }
        let dispatcher = self
        Task {
            guard let name = (try? await dispatcher.authenticator.authenticate(head, pathApp: nil))?.operatorName else { return }
            var context = RouteContext(parameters: parameters, requestId: requestId, pattern: pattern)
            context.operatorName = name
            await dispatcher.record(HTTPRequest(head: head, body: []), context, status: status)
        }
    }

    /// A GET whose data is in memory or one point read away, answered without waiting; nil to go through
    /// `respond` (no inline handler, the caller's app not at hand, or the handler would have to wait).
    /// Refusals (unknown route, 405, 400, 401, 403, 404) are answered here for every GET, inline handler
    /// or not, since `admit` leaves a GET without a body to this step (see `admit`).
    func respondInline(to request: HTTPRequest, context: inout APIRequestContext) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD" else { return nil }
        do {
            let (route, parameters) = try route(for: request.head)
            context.pattern = route.pattern
            let routeContext = RouteContext(parameters: parameters, requestId: context.requestId, pattern: route.pattern)
            guard try authenticator.authorizeNow(route.access, request.head, routeContext), let inline = route.inline else { return nil }
            return try inline(request, routeContext)
        } catch {
            return problem(for: error, requestId: context.requestId)
        }
    }

    /// A refusal from the head alone; nil to go on, also when deciding needs storage. In this order: unknown
    /// routes and methods, invalid paths (501, 405, 404, 400); missing or invalid credentials, invalid path
    /// ids, callers the route's access does not admit (401, 400, 404, 403), when that needs no waiting; then
    /// the body the route takes: none announced where it takes none (413, also after access left to
    /// `respond`, so such a body is never read), `application/json` where it takes JSON (415, once access
    /// is granted: a stranger learns nothing from it).
    ///
    /// A GET or HEAD that announces no body is whole already: nothing is left to protect by deciding early,
    /// and `respondInline` (then `respond`) makes the same refusals, so it goes on at once instead of
    /// routing and authenticating twice.
    func admit(_ head: HTTPRequestHead, context: inout APIRequestContext) -> HTTPResponse? {
        if head.method == "GET" || head.method == "HEAD", !head.announcesBody { return nil }
        do {
            if head.method == "OPTIONS" {
                context.pattern = "OPTIONS"
                try Self.checkBody(head, .empty, accessGranted: true)
                return nil
            }
            let (route, parameters) = try route(for: head)
            context.pattern = route.pattern
            // Whether decided now (admitted) or left to `respond` (needs storage), the request goes on.
            let granted: Bool
            do {
                granted = try authenticator.authorizeNow(route.access, head,
                                                         RouteContext(parameters: parameters, requestId: context.requestId, pattern: route.pattern))
            } catch {
                auditRefused(head, pattern: route.pattern, parameters: parameters, requestId: context.requestId, error)
                throw error
            }
            try Self.checkBody(head, route.body, accessGranted: granted)
            return nil
        } catch {
            return problem(for: error, requestId: context.requestId)
        }
    }

    /// The answer to a request on a connection accepted while the server drains, named by its route's
    /// pattern when it has one (so `/readyz` probes count as `/readyz`).
    func draining(_ head: HTTPRequestHead, context: inout APIRequestContext) -> HTTPResponse {
        if head.method == "OPTIONS" {
            context.pattern = "OPTIONS"
        } else if Self.implementedMethods.contains(head.method), case .found(let route, _) = router.match(method: head.method, path: head.path) {
            context.pattern = route.pattern
        }
        return APIError.draining.response()
    }

    /// The route's declared body against what the head announces.
    /// - Throws: `APIError` 413 (`body-not-allowed`) or 415 (`unsupported-media-type`).
    private static func checkBody(_ head: HTTPRequestHead, _ body: RouteBody, accessGranted: Bool) throws {
        switch body {
        case .empty: if head.announcesBody { throw APIError.bodyNotAllowed }
        case .json: if accessGranted, !head.hasJSONContentType { throw APIError.unsupportedMediaType }
        }
    }

    /// The route for a request head.
    /// - Throws: `APIError` 501 (unknown method), 404 (no route), 405 (with `Allow`), 400 (bad percent-encoding).
    private func route(for head: HTTPRequestHead) throws -> (Router.Route, [String: String]) {
        // A method no resource here implements is 501, whatever the path (RFC 9110 §9.1); 405 is for known
        // methods a path lacks.
        guard Self.implementedMethods.contains(head.method) else { throw APIError.notImplemented(head.method) }
        switch router.match(method: head.method, path: head.path) {
        case .found(let route, let parameters):
            if let repeated = head.repeatedQueryParameter {
                throw APIError.badRequest(.invalidParameter, "the query parameter \(ClientText.quoted(repeated)) is given more than once")
            }
            return (route, parameters)
        case .methodNotAllowed(let allowed): throw APIError.methodNotAllowed(allowed + ["OPTIONS"])
        case .notFound: throw APIError.notFound(.noRoute, "no resource at this path")
        case .badPath: throw APIError.badRequest(.invalidPath, "the path has an invalid percent-encoding")
        }
    }

    /// `OPTIONS` (RFC 9110 §9.3.7): the methods a path allows, in `Allow`. The CORS middleware adds the
    /// preflight headers.
    /// - Throws: `APIError` 404 (no route), 400 (bad percent-encoding).
    private func options(_ head: HTTPRequestHead) throws -> HTTPResponse {
        let allowed: [String]
        switch router.match(method: "OPTIONS", path: head.path) {
        case .methodNotAllowed(let methods): allowed = methods + ["OPTIONS"]
        case .found: allowed = ["OPTIONS"]
        case .notFound: throw APIError.notFound(.noRoute, "no resource at this path")
        case .badPath: throw APIError.badRequest(.invalidPath, "the path has an invalid percent-encoding")
        }
        return HTTPResponse(status: 204, headers: HTTPHeaders([("Allow", allowed.joined(separator: ", "))]))
    }

    /// The problem document for any error a route, the authenticator or a handler threw.
    private func problem(for error: any Error, requestId: String) -> HTTPResponse {
        switch error {
        case let error as APIError: return error.response()
        case let error as MalformedDocument: return APIError.malformed(error).response()
        case let error as RuleRefusal: return APIError.refused(error).response()
        case let error as WriteError: return APIError.write(error).response()
        case let error as SchemaRegistrationError: return APIError.registration(error).response()
        case StoreConflict.revisionMismatch(let current):
            return APIError.preconditionFailed(current: nil, detail: "it is at revision \(current) now; read it again and retry").response()
        case StoreConflict.notFound: return APIError.notFound(.appNotFound, "no such app").response()
        case let error as JSONParser.Failure:
            // A stored document that does not parse: our bug or the disk's, logged without its content.
            logger.error("stored_document_unreadable", [("requestId", .string(requestId)), ("offset", .integer(error.offset))])
            return APIError.internalError(requestId: requestId).response()
        case StoreConflict.alreadyExists:
            return APIError(status: 409, slug: .alreadyExists, title: "Conflict", detail: "it already exists").response()
        case let error as StorageError where error.isUnavailable:
            // Not our bug: the disk is full or read-only. 503 + Retry-After; /readyz reports it until a write succeeds.
            logger.error("storage_unavailable", [("requestId", .string(requestId)), ("code", .integer(Int(error.engineCode))),
                                                 ("error", .string(error.message))])
            return APIError.storageUnavailable(error).response()
        default:
            // Our bug or the disk's: the client gets a request id, the log gets the details (never bodies).
            logger.error("handler_failed", [("requestId", .string(requestId)), ("error", .string(String(describing: error)))])
            return APIError.internalError(requestId: requestId).response()
        }
    }
}
