import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// An error answered as an RFC 9457 problem document. Every error of the API becomes one of these
/// in exactly one place (`RouteDispatcher`).
package struct APIError: Error, Sendable {
    package var status: Int
    /// A stable kebab-case slug; the problem `type` is `urn:tabstore:problem:<slug>`.
    package var slug: ProblemType
    package var title: String
    package var detail: String
    package var violations: [Violation] = []
    package var headers: HTTPHeaders = HTTPHeaders()
    /// Members a problem of this type adds (RFC 9457 extension members), after the standard ones.
    package var extensions: [(String, JSONValue)] = []

    package init(status: Int, slug: ProblemType, title: String, detail: String, violations: [Violation] = []) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.violations = violations
    }

    package static func malformed(_ document: MalformedDocument) -> APIError {
        APIError(status: 400, slug: .malformedRequest, title: "Malformed request",
                 detail: document.violations.first?.detail ?? "the request body is malformed", violations: document.violations)
    }

    package static func badRequest(_ slug: ProblemType, _ detail: String) -> APIError {
        APIError(status: 400, slug: slug, title: "Bad request", detail: detail)
    }

    package static func refused(_ refusal: RuleRefusal) -> APIError {
        APIError(status: 422, slug: .ruleViolation, title: "Refused by the tab schema's rules",
                 detail: refusal.violations.prefix(3).map(\.detail).joined(separator: "; ")
                    + (refusal.violations.count > 3 ? "; and \(refusal.violations.count - 3) more" : ""),
                 violations: refusal.violations)
    }

    package static func notFound(_ slug: ProblemType, _ detail: String) -> APIError {
        APIError(status: 404, slug: slug, title: "Not found", detail: detail)
    }

    /// 401 with a Bearer challenge (RFC 6750 §3): `error="invalid_token"` when credentials were sent and
    /// failed; no error parameter when the request carried none (or used another scheme), per §3.1.
    package static func unauthorized(_ detail: String, credentialsSent: Bool = true) -> APIError {
        var error = APIError(status: 401, slug: .unauthorized, title: "Unauthorized", detail: detail)
        error.headers.add("WWW-Authenticate", credentialsSent ? #"Bearer realm="tabstore", error="invalid_token""# : #"Bearer realm="tabstore""#)
        return error
    }

    /// 401 for a stream or long poll whose token's `exp` passed: requests get a 30 s leeway for clock skew, but
    /// what waits is not opened (or kept) on an expired token, so the client refreshes instead of reconnecting
    /// to a stream that would end at once.
    static let tokenExpired = unauthorized("invalid token: token expired; get a fresh one to follow changes")

    /// 401 for a follower whose token the app's previous signing secret verified.
    static let operatorTokenRevoked = unauthorized("the operator token was revoked")
    static let credentialsRevoked = unauthorized("the token is no longer valid: the app's signing secret was rotated; get a fresh token")

    package static func forbidden(_ detail: String) -> APIError {
        APIError(status: 403, slug: .forbidden, title: "Forbidden", detail: detail)
    }

    /// 412: a precondition (`If-Match`, `If-None-Match`, a `revision` in a body) does not hold. Carries the
    /// current representation's ETag when there is one, so the client knows what it would have to name.
    package static func preconditionFailed(current etag: EntityTag?, detail: String) -> APIError {
        var error = APIError(status: 412, slug: .revisionMismatch, title: "Precondition failed", detail: detail)
        if let etag { error.headers.add("ETag", etag.text) }
        return error
    }

    /// 413: a body announced (`Content-Length` over 0, or chunked) to a route that takes none; refused from
    /// the head, so the body is never read.
    package static let bodyNotAllowed = APIError(status: 413, slug: .bodyNotAllowed, title: "Content too large",
                                                 detail: "this resource takes no request body")

    /// 415: a JSON route's request that does not say `Content-Type: application/json`.
    package static let unsupportedMediaType = APIError(status: 415, slug: .unsupportedMediaType, title: "Unsupported media type",
                                                       detail: "send the body as application/json")

    /// 503 while the server drains for shutdown (`/readyz`, and every request on a connection accepted meanwhile).
    package static let draining: APIError = {
        var error = APIError(status: 503, slug: .draining, title: "Service unavailable", detail: "the server is shutting down")
        error.headers.add("Retry-After", "1")
        return error
    }()

    /// 501: a request method this server implements for no resource (RFC 9110 §15.6.2).
    package static func notImplemented(_ method: String) -> APIError {
        APIError(status: 501, slug: .notImplemented, title: "Not implemented",
                 detail: "this server implements GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS")
    }

    package static func methodNotAllowed(_ allowed: [String]) -> APIError {
        var error = APIError(status: 405, slug: .methodNotAllowed, title: "Method not allowed",
                             detail: "allowed: \(allowed.joined(separator: ", "))")
        error.headers.add("Allow", allowed.joined(separator: ", "))
        return error
    }

    package static func internalError(requestId: String) -> APIError {
        APIError(status: 500, slug: .internalError, title: "Internal server error",
                 detail: "something went wrong on our side; quote request id \(requestId) when reporting it")
    }

    /// The database cannot take writes (full, read-only, I/O error, corrupt): the client may retry later.
    /// The detail names the condition only (no paths, no SQL).
    /// A database server that does not answer within its bound (unreachable, frozen, every connection busy) is
    /// `database-unavailable`.
    package static func storageUnavailable(_ error: StorageError) -> APIError {
        if let condition = error.unavailableCondition {
            var problem = APIError(status: 503, slug: .databaseUnavailable, title: "Service unavailable",
                                   detail: "the database did not answer in time (\(condition)); retry later")
            problem.headers.add("Retry-After", String(StorePolicy.retryAfterSeconds))
            return problem
        }
        var problem = APIError(status: 503, slug: .storageUnavailable, title: "Service unavailable",
                               detail: "the database cannot take writes now (\(error.conditionName ?? "unknown")); retry later")
        problem.headers.add("Retry-After", String(StorePolicy.retryAfterSeconds))
        return problem
    }

    /// The most entries a problem's `errors` lists.
    package static let maxListedErrors = 100

    /// The problem document.
    package func response() -> HTTPResponse {
        var object = JSONObject([
            ("type", .string(slug.uri)), ("title", .string(title)),
            ("status", .integer(status)), ("detail", .string(detail)),
        ])
        if !violations.isEmpty {
            // At most `maxListedErrors`: a hostile document could otherwise make one answer list thousands.
            object["errors"] = .array(violations.prefix(Self.maxListedErrors).map {
                .object(JSONObject([("pointer", .string($0.pointer)), ("code", .string($0.code.rawValue)), ("detail", .string($0.detail))]))
            })
        }
        for (name, value) in extensions { object[name] = value }
        var headers = self.headers
        headers.add("Content-Type", "application/problem+json")
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: headers, body: JSONWriter.bytes(.object(object)))
    }
}

extension APIError {
    /// The problem for a write the application layer refused (`CustomizationWrites`).
    package static func write(_ error: WriteError) -> APIError {
        switch error {
        case .preconditionFailed(let current, let detail):
            return .preconditionFailed(current: EntityTag(current), detail: detail)
        case .appNotFound(let appId):
            return .notFound(.appNotFound, "no app \"\(appId)\"")
        case .contention(let detail):
            // 503 `write-contention`: nothing was applied; retry soon.
            var contention = APIError(status: 503, slug: .writeContention, title: "Service unavailable", detail: detail)
            contention.headers.add("Retry-After", "1")
            return contention
        case .idempotencyKeyReused:
            return APIError(status: 422, slug: .idempotencyKeyReused, title: "Idempotency key reused",
                            detail: "this Idempotency-Key was used for a different request (method, path, schema version or body); use a new key for a new request")
        }
    }
}

extension APIError {
    /// The problem for a schema registration the application layer refused (`ApplicationServices.registerSchema`).
    package static func registration(_ error: SchemaRegistrationError) -> APIError {
        switch error {
        case .concurrentRegistration:
            APIError(
                status: 409, slug: .concurrentRegistration, title: "Conflict",
                detail: "another schema version was registered meanwhile; read it and retry")
        case .appNotFound(let appId):
            .notFound(.appNotFound, "no app \"\(appId)\"")
        }
    }
}
