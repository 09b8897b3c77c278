import TabStoreAuth
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport

/// A write sent with an `Idempotency-Key` (API.md "Exactly-once writes"): the key, and the digest a repeat
/// must match. Keys are scoped to the app and user of the path; a repeat gets the first answer again.
struct IdempotentRequest: Sendable {
    let key: String
    /// SHA-256 over the method, the path and the body, each length-prefixed so no two requests share the input.
    let digest: [UInt8]

    static let header = "Idempotency-Key"
    static let maxKeyBytes = 255

    /// The request's key, or nil when it sent none.
    /// - Throws: `APIError` 400 `invalid-idempotency-key` for a repeated header, or a key that is not 1-255
    ///   visible ASCII characters.
    init?(_ request: HTTPRequest) throws {
        let values = request.headers.values(Self.header)
        guard let value = values.first else { return nil }
        let bytes = Array(value.utf8)
        guard values.count == 1, (1...Self.maxKeyBytes).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError.badRequest(.invalidIdempotencyKey, "send one Idempotency-Key of 1-\(Self.maxKeyBytes) visible ASCII characters")
        }
        key = value
        var input: [UInt8] = []
        for part in [Array(request.method.utf8), Array(request.head.path.utf8), request.body] {
            input.append(contentsOf: withUnsafeBytes(of: UInt64(part.count).bigEndian, Array.init))
            input.append(contentsOf: part)
        }
        digest = Crypto.sha256(input)
    }

    /// The stored first answer again, when `stored` was made by the same request.
    /// - Throws: `APIError` 422 `idempotency-key-reused` when the key was used for another request.
    func replay(_ stored: IdempotentAnswer) throws -> HTTPResponse {
        guard Crypto.constantTimeEqual(stored.requestDigest, digest) else {
            throw APIError(status: 422, slug: .idempotencyKeyReused, title: "Idempotency key reused",
                           detail: "this Idempotency-Key was used for a different request (method, path or body); use a new key for a new request")
        }
        var headers = HTTPHeaders()
        if let etag = stored.etag { headers.add("ETag", etag) }
        if !stored.body.isEmpty {
            headers.add("Content-Type", "application/json")
            headers.add("Cache-Control", CustomizationRoutes.userCacheControl)
        }
        headers.add("Idempotent-Replayed", "true")
        return HTTPResponse(status: stored.status, headers: headers, body: stored.body)
    }

    /// What to store for `response`, the first answer.
    func answer(_ response: HTTPResponse, at now: Int) -> IdempotentAnswer {
        IdempotentAnswer(key: key, requestDigest: digest, status: response.status, etag: response.headers["ETag"], body: response.body, createdAt: now)
    }
}
