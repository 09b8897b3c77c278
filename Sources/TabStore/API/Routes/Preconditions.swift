import TabStoreApplication
import TabStoreHTTP
import TabStoreSupport
/// `If-Match` and `If-None-Match` of one request, parsed once, evaluated as RFC 9110 §13.2.2 orders them.
struct Preconditions: Sendable {
    let ifMatch: EntityTagCondition?
    let ifNoneMatch: EntityTagCondition?

    enum Outcome: Equatable {
        /// Send the representation / apply the write.
        case proceed
        /// GET/HEAD whose `If-None-Match` names the current representation: 304.
        case notModified
        /// 412.
        case failed
    }

    /// - Throws: `APIError` 400 `invalid-if-match` / `invalid-if-none-match` for a value that is not `*` or a
    ///   list of entity-tags.
    init(_ request: HTTPRequest) throws {
        do {
            ifMatch = try EntityTagCondition.parse(request.headers.values("If-Match"))
        } catch {
            throw APIError.badRequest(.invalidIfMatch, "If-Match must be * or a comma-separated list of entity-tags, like \"3.2\"")
        }
        do {
            ifNoneMatch = try EntityTagCondition.parse(request.headers.values("If-None-Match"))
        } catch {
            throw APIError.badRequest(.invalidIfNoneMatch, "If-None-Match must be * or a comma-separated list of entity-tags, like \"3.2\"")
        }
    }

    /// - Parameters:
    ///   - current: the ETag of the current representation.
    ///   - exists: whether a current representation exists (what `*` tests).
    ///   - safe: GET/HEAD (a matching `If-None-Match` gives 304) rather than a write (412).
    func evaluate(_ current: EntityTag, exists: Bool, safe: Bool) -> Outcome {
        // §13.1.1: strong comparison; `*` needs a current representation.
        if let ifMatch, !ifMatch.matchesStrongly(current, exists: exists) { return .failed }
        // §13.1.2: weak comparison.
        if let ifNoneMatch, ifNoneMatch.matchesWeakly(current, exists: exists) { return safe ? .notModified : .failed }
        return .proceed
    }
}

extension Preconditions {
    /// The preconditions as the application layer checks a write against them (`WritePreconditions.hold`, which
    /// compares as `evaluate(_:exists:safe: false)` does, with the same `EntityTagCondition`).
    var forWrite: WritePreconditions { WritePreconditions(ifMatch: ifMatch, ifNoneMatch: ifNoneMatch) }

    /// Evaluates a GET's preconditions against `etag`: a 304 (with `headers`, which carry the ETag and the
    /// caching headers a 200 would), nil to send the representation.
    /// `exists`: what `*` tests (a customization exists once it has a revision, as for writes).
    /// - Throws: `APIError` 400 for a malformed header, 412 when `If-Match` does not match.
    static func earlyAnswer(to request: HTTPRequest, etag: EntityTag, exists: Bool = true, headers: HTTPHeaders) throws -> HTTPResponse? {
        switch try Preconditions(request).evaluate(etag, exists: exists, safe: true) {
        case .proceed: return nil
        case .notModified: return HTTPResponse(status: 304, headers: headers)
        case .failed: throw APIError.preconditionFailed(current: etag, detail: "If-Match does not name the current representation")
        }
    }

    /// The headers of a cacheable answer with `etag`.
    static func validatorHeaders(_ etag: EntityTag, cacheControl: String) -> HTTPHeaders {
        HTTPHeaders([("ETag", etag.text), ("Cache-Control", cacheControl)])
    }
}
