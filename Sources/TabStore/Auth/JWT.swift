import TabStoreSupport
/// HS256 JSON Web Tokens (RFC 7519 / RFC 7515) for an app's users.
package enum JWT {
    package struct Claims: Sendable, Equatable {
        package let subject: Identifier
        package let audience: [Identifier]
        package let expiresAt: Int
        package let notBefore: Int?
        package let issuedAt: Int?

        /// The time before which the token is not valid: `nbf`, or with `orIssuedAt` the later of `nbf` and `iat`.
        package func notBefore(orIssuedAt: Bool) -> Int? {
            guard orIssuedAt, let issuedAt else { return notBefore }
            return Swift.max(notBefore ?? issuedAt, issuedAt)
        }
    }

    package enum Failure: Error, Sendable, Equatable {
        case malformed(String)
        case unsupportedAlgorithm(String)
        case badSignature
        case expired
        case notYetValid
    }

    /// Clock skew tolerated on `exp`, `nbf` and `iat` (seconds).
    package static let leeway = 30
    /// The latest time a claim may name: 9999-12-31T23:59:59Z. Bounding `exp`, `nbf` and `iat` when parsing
    /// keeps every later sum (`exp + leeway`) far from `Int.max`: a claim can never make arithmetic trap.
    package static let maxTimestamp = 253_402_300_799
    /// Most audiences one token may list.
    package static let maxAudiences = 16
    /// Longest token accepted, so a hostile header cannot make us parse megabytes.
    package static let maxLength = 8 * 1024

    /// A token split and decoded once: its claims (not yet trusted), and what the signature covers.
    package struct Parsed: Sendable {
        package let claims: Claims
        let signingInput: ArraySlice<UInt8>
        let signature: [UInt8]
    }

    /// Splits and decodes a token; checks only its shape and algorithm, so the caller can find the app
    /// (`aud`) whose secret must verify it.
    /// - Throws: `JWT.Failure.malformed` / `.unsupportedAlgorithm`.
    package static func parse(_ token: String) throws(Failure) -> Parsed {
        let bytes = Array(token.utf8)
        guard bytes.count <= maxLength else { throw .malformed("token too long") }
        guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
              let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
              !bytes[(secondDot + 1)...].contains(UInt8(ascii: ".")), firstDot > 0, secondDot > firstDot + 1
        else { throw .malformed("a JWT has three dot-separated parts") }
        try checkHeader(bytes[..<firstDot])
        let claims = try claims(bytes[(firstDot + 1)..<secondDot])
        guard let signature = Base64URL.decode(bytes[(secondDot + 1)...]) else { throw .malformed("invalid base64url") }
        return Parsed(claims: claims, signingInput: bytes[..<secondDot], signature: signature)
    }

    /// The unverified claims of a token.
    /// - Throws: `JWT.Failure.malformed` / `.unsupportedAlgorithm`.
    package static func unverifiedClaims(_ token: String) throws(Failure) -> Claims { try parse(token).claims }

    /// Verifies the signature with `secret` and the time claims against `now` (seconds since 1970).
    /// - Throws: `JWT.Failure`.
    package static func verify(_ parsed: Parsed, secret: String, now: Int) throws(Failure) -> Claims {
        let expected = Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(parsed.signingInput))
        guard Crypto.constantTimeEqual(parsed.signature, expected) else { throw .badSignature }
        let claims = parsed.claims
        try checkTimes(expiresAt: claims.expiresAt, notBefore: claims.notBefore(orIssuedAt: true), now: now)
        return claims
    }

    /// Checks `exp` and not-before against `now` with the leeway, without overflow whatever the values.
    /// - Throws: `.expired`, `.notYetValid`.
    package static func checkTimes(expiresAt: Int, notBefore: Int?, now: Int) throws(Failure) {
        // Claims are within 0...maxTimestamp; the leeway is applied to `now` with overflow reported, never trapping.
        let (earliest, overflowDown) = now.subtractingReportingOverflow(leeway)
        let (latest, overflowUp) = now.addingReportingOverflow(leeway)
        guard overflowDown || earliest <= expiresAt else { throw .expired }
        if let notBefore, !overflowUp, latest < notBefore { throw .notYetValid }
    }

    /// Parses and verifies in one call.
    /// - Throws: `JWT.Failure`.
    package static func verify(_ token: String, secret: String, now: Int) throws(Failure) -> Claims {
        try verify(try parse(token), secret: secret, now: now)
    }

    /// Mints a token (for `tab-server token` and tests).
    package static func sign(subject: Identifier, audience: Identifier, expiresAt: Int, issuedAt: Int, secret: String) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(JSONWriter.bytes(.object(JSONObject([
            ("sub", .string(subject.text)), ("aud", .string(audience.text)), ("iat", .integer(issuedAt)), ("exp", .integer(expiresAt)),
        ]))))
        let input = header + "." + payload
        return input + "." + Base64URL.encode(Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(input.utf8)))
    }

    private static func decodeJSON(_ part: ArraySlice<UInt8>) throws(Failure) -> JSONObject {
        guard let bytes = Base64URL.decode(part) else { throw .malformed("invalid base64url") }
        guard case .object(let object)? = try? JSONParser.parse(bytes, maxDepth: 8) else { throw .malformed("invalid JSON") }
        return object
    }

    /// The headers libraries send for HS256 (`sign`'s, PyJWT's, jose's), base64url-encoded: a token that carries
    /// one of these exact byte strings has an HS256 header without `crit`, so it is not decoded again per token.
    private static let knownHeaders: [[UInt8]] = [#"{"alg":"HS256","typ":"JWT"}"#, #"{"typ":"JWT","alg":"HS256"}"#, #"{"alg":"HS256"}"#]
        .map { Array(Base64URL.encode(Array($0.utf8)).utf8) }

    /// Only HS256: `none` and every other algorithm (RS256 with a public key as HMAC secret, ...) are refused.
    private static func checkHeader(_ part: ArraySlice<UInt8>) throws(Failure) {
        if knownHeaders.contains(where: { $0.elementsEqual(part) }) { return }
        let header = try decodeJSON(part)
        guard case .string(let algorithm)? = header["alg"] else { throw .malformed("missing alg") }
        guard algorithm == "HS256" else { throw .unsupportedAlgorithm(algorithm) }
        if header["crit"] != nil { throw .malformed("crit header parameters are not supported") }
    }

    private static func claims(_ part: ArraySlice<UInt8>) throws(Failure) -> Claims {
        let payload = try decodeJSON(part)
        guard case .string(let text)? = payload["sub"] else { throw .malformed("missing sub") }
        let subject = Identifier(text)
        // A user id as the API defines it (1-256 UTF-8 bytes, no control characters): nothing longer is cached or compared.
        guard subject.isValidId else { throw .malformed("sub must be 1-\(Identifier.maxBytes) UTF-8 bytes without control characters") }
        let audience: [Identifier]
        switch payload["aud"] {
        case .string(let single)?: audience = [Identifier(single)]
        case .array(let many)?:
            guard (1...maxAudiences).contains(many.count) else { throw .malformed("aud must list 1-\(maxAudiences) apps") }
            audience = many.compactMap { if case .string(let text) = $0 { Identifier(text) } else { nil } }
            guard audience.count == many.count else { throw .malformed("aud must be strings") }
        default: throw .malformed("missing aud")
        }
        /// NumericDate (RFC 7519 §2): seconds since 1970, here bounded to 0...maxTimestamp (year 9999).
        func number(_ key: String) throws(Failure) -> Int? {
            let seconds: Int
            switch payload[key] {
            case nil, .null?: return nil
            case .integer(let value)?: seconds = value
            case .number(let value)? where value.isFinite && value >= 0 && value <= Double(maxTimestamp): seconds = Int(value)
            default: throw .malformed("\(key) must be a number of seconds from 0 to \(maxTimestamp)")
            }
            guard (0...maxTimestamp).contains(seconds) else { throw .malformed("\(key) must be a number of seconds from 0 to \(maxTimestamp)") }
            return seconds
        }
        guard let expiresAt = try number("exp") else { throw .malformed("missing exp") }
        return Claims(subject: subject, audience: audience, expiresAt: expiresAt, notBefore: try number("nbf"), issuedAt: try number("iat"))
    }
}
