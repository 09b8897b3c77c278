/// HS256 JSON Web Tokens (RFC 7519 / RFC 7515) for an app's users.
public enum JWT {
    public struct Claims: Sendable, Equatable {
        public let subject: String
        public let audience: [String]
        public let expiresAt: Int
        public let notBefore: Int?
        public let issuedAt: Int?
    }

    public enum Failure: Error, Sendable, Equatable {
        case malformed(String)
        case unsupportedAlgorithm(String)
        case badSignature
        case expired
        case notYetValid
    }

    /// Clock skew tolerated on `exp`, `nbf` and `iat` (seconds).
    public static let leeway = 30
    /// Longest token accepted, so a hostile header cannot make us parse megabytes.
    public static let maxLength = 8 * 1024

    /// The unverified claims, so the caller can find the app (`aud`) whose secret verifies the token.
    /// - Throws: `JWT.Failure.malformed` / `.unsupportedAlgorithm`.
    public static func unverifiedClaims(_ token: String) throws(Failure) -> Claims {
        let (header, payload, _) = try split(token)
        try checkHeader(header)
        return try claims(payload)
    }

    /// Verifies the signature with `secret` and the time claims against `now` (seconds since 1970).
    /// - Throws: `JWT.Failure`.
    public static func verify(_ token: String, secret: String, now: Int) throws(Failure) -> Claims {
        let (header, payload, signature) = try split(token)
        try checkHeader(header)
        let signingInput = Array(token.utf8.prefix(header.count + 1 + payload.count))
        let expected = Crypto.hmacSHA256(key: Array(secret.utf8), message: signingInput)
        guard let given = Base64URL.decode(signature), Crypto.constantTimeEqual(given, expected) else { throw .badSignature }
        let claims = try claims(payload)
        guard now <= claims.expiresAt + leeway else { throw .expired }
        if let notBefore = claims.notBefore, now + leeway < notBefore { throw .notYetValid }
        if let issuedAt = claims.issuedAt, now + leeway < issuedAt { throw .notYetValid }
        return claims
    }

    /// Mints a token (for `tab-server token` and tests).
    public static func sign(subject: String, audience: String, expiresAt: Int, issuedAt: Int, secret: String) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(JSONWriter.bytes(.object(JSONObject([
            ("sub", .string(subject)), ("aud", .string(audience)), ("iat", .integer(issuedAt)), ("exp", .integer(expiresAt)),
        ]))))
        let input = header + "." + payload
        return input + "." + Base64URL.encode(Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(input.utf8)))
    }

    private static func split(_ token: String) throws(Failure) -> (Substring, Substring, Substring) {
        guard token.utf8.count <= maxLength else { throw .malformed("token too long") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw .malformed("a JWT has three dot-separated parts") }
        return (parts[0], parts[1], parts[2])
    }

    private static func decodeJSON(_ part: Substring) throws(Failure) -> JSONObject {
        guard let bytes = Base64URL.decode(part) else { throw .malformed("invalid base64url") }
        guard case .object(let object)? = try? JSONParser.parse(bytes, maxDepth: 8) else { throw .malformed("invalid JSON") }
        return object
    }

    /// Only HS256: `none` and every other algorithm (RS256 with a public key as HMAC secret, ...) are refused.
    private static func checkHeader(_ part: Substring) throws(Failure) {
        let header = try decodeJSON(part)
        guard case .string(let algorithm)? = header["alg"] else { throw .malformed("missing alg") }
        guard algorithm == "HS256" else { throw .unsupportedAlgorithm(algorithm) }
        if header["crit"] != nil { throw .malformed("crit header parameters are not supported") }
    }

    private static func claims(_ part: Substring) throws(Failure) -> Claims {
        let payload = try decodeJSON(part)
        guard case .string(let subject)? = payload["sub"], !subject.isEmpty else { throw .malformed("missing sub") }
        let audience: [String]
        switch payload["aud"] {
        case .string(let single)?: audience = [single]
        case .array(let many)?:
            audience = many.compactMap { if case .string(let text) = $0 { text } else { nil } }
            guard audience.count == many.count else { throw .malformed("aud must be strings") }
        default: throw .malformed("missing aud")
        }
        func number(_ key: String) throws(Failure) -> Int? {
            switch payload[key] {
            case nil, .null?: return nil
            case .integer(let value)?: return value
            case .number(let value)? where value.isFinite && abs(value) < 1e15: return Int(value)
            default: throw .malformed("\(key) must be a number")
            }
        }
        guard let expiresAt = try number("exp") else { throw .malformed("missing exp") }
        return Claims(subject: subject, audience: audience, expiresAt: expiresAt, notBefore: try number("nbf"), issuedAt: try number("iat"))
    }
}
