import TabStoreApplication
import TabStoreAuth
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// A write sent with an `Idempotency-Key` (docs/devices.md "Write exactly once: Idempotency-Key"): the key, and the digest a repeat
/// must match. Keys are scoped to the app and user of the path; a repeat gets the first answer again.
struct IdempotentRequest: Sendable {
    let key: String
    /// SHA-256 over the method, the canonical path (`canonicalPath`), the body and the `schemaVersion` parameter when
    /// there is one, each length-prefixed so no two requests share the input.
    let digest: [UInt8]

    static let header = "Idempotency-Key"
    static let maxKeyBytes = 255

    /// The request's key, or nil when it sent none.
    /// - Throws: `APIError` 400 `invalid-idempotency-key` for a repeated header, or a key that is not 1-255
    ///   visible ASCII characters.
    init?(_ request: HTTPRequest) throws {
        let values = request.headers.values(Self.header)
        guard let value = values.first else { return nil }
        guard values.count == 1, (1...Self.maxKeyBytes).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError.badRequest(.invalidIdempotencyKey, "send one Idempotency-Key of 1-\(Self.maxKeyBytes) visible ASCII characters")
        }
        key = value
        let method = request.method.utf8, path = Self.canonicalPath(request.head.path).utf8, body = request.body
        var input: [UInt8] = []
        input.reserveCapacity(24 + method.count + path.count + body.count)
        func add(_ part: some Collection<UInt8>) {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { input.append(contentsOf: $0) }
            input.append(contentsOf: part)
        }
        add(method)
        add(path)
        add(body)
        // The schema version the request is answered under is part of the request (the same change from a client of
        // another version is another request, with another answer); requests without one hash as before.
        if let version = request.queryParameter("schemaVersion") {
            add("schemaVersion".utf8)
            add((Int(version).map(String.init) ?? version).utf8)
        }
        digest = Crypto.sha256(input)
    }

    /// The path as compared: each segment percent-decoded, then encoded one way (RFC 3986 §6.2.2: unreserved
    /// characters, sub-delims, `:` and `@` as themselves, every other byte as `%XX` in upper case), so
    /// `al%69ce` and `alice` are one request. Segments are split before decoding, so an encoded `/` stays part
    /// of its segment. An ordinarily encoded path is its own canonical form: digests stored before this form
    /// existed (over the raw path) still match such paths.
    static func canonicalPath(_ path: Substring) -> String {
        if path.utf8.allSatisfy({ $0 == UInt8(ascii: "/") || Self.keptInPath($0) }) { return String(path) }  // nothing encoded
        var canonical: [UInt8] = []
        canonical.reserveCapacity(path.utf8.count)
        var first = true
        for raw in path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if !first { canonical.append(UInt8(ascii: "/")) }
            first = false
            // The router refused a path that does not decode (400) before any handler ran; kept raw if it did.
            guard let decoded = PercentDecoding.decode(Substring(raw)) else {
                canonical.append(contentsOf: raw)
                continue
            }
            for byte in decoded.utf8 {
                if Self.keptInPath(byte) {
                    canonical.append(byte)
                } else {
                    canonical.append(UInt8(ascii: "%"))
                    canonical.append(Self.hexDigits[Int(byte >> 4)])
                    canonical.append(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
        }
        return String(decoding: canonical, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
    private static let keptPunctuation = Array("-._~!$&'()*+,;=:@".utf8)

    /// pchar without pct-encoded (RFC 3986 §3.3): unreserved, sub-delims, ":" and "@".
    private static func keptInPath(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: keptPunctuation.contains(byte)
        }
    }

    /// The write the application layer is given: the key, the digest, and the first answer as this API sends it
    /// (`CustomizationRoutes.answer`): 200 with the customization and its ETag, or 204 with nothing.
    var write: IdempotentWrite {
        IdempotentWrite(key: key, digest: digest) { written in
            guard let document = written.document else { return StoredAnswer(status: 204, etag: nil, body: []) }
            return StoredAnswer(status: 200, etag: EntityTag(written.tag).text, body: document)
        }
    }

    /// The stored first answer again (the application layer checked it was made by the same request).
    static func response(replaying stored: IdempotentAnswer) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let etag = stored.etag { headers.add("ETag", etag) }
        if !stored.body.isEmpty {
            headers.add("Content-Type", "application/json")
            headers.add("Cache-Control", CustomizationRoutes.userCacheControl)
        }
        headers.add("Idempotent-Replayed", "true")
        return HTTPResponse(status: stored.status, headers: headers, body: stored.body)
    }
}
