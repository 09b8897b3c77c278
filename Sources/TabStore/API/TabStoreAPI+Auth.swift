/// Who is calling.
enum Principal: Sendable, Equatable {
    case admin
    case user(appId: String, userId: String)
}

extension TabStoreAPI {
    /// The bearer token of the request, or 401.
    private func bearer(_ request: HTTPRequest) throws -> String {
        let values = request.headers.values("Authorization")
        guard values.count == 1, let value = values.first else {
            throw APIError.unauthorized(values.isEmpty ? "send Authorization: Bearer <token>" : "send exactly one Authorization header")
        }
        // RFC 6750 §2.1: "Bearer" (any case), one space, the token.
        let bytes = value.utf8
        guard bytes.count > 7, let space = bytes.firstIndex(of: UInt8(ascii: " ")),
              bytes.distance(from: bytes.startIndex, to: space) == 6,
              String(value[..<space]).lowercased() == "bearer"
        else { throw APIError.unauthorized("the Authorization header must be Bearer <token>") }
        let token = String(value[value.index(after: space)...]).trimmingOWS()
        guard !token.isEmpty else { throw APIError.unauthorized("the Authorization header must be Bearer <token>") }
        return token
    }

    /// Identifies the caller: the operator's token, or an app user's HS256 JWT.
    /// - Throws: `APIError` 401 for missing, malformed, forged, expired or not-yet-valid credentials.
    func authenticate(_ request: HTTPRequest) async throws -> Principal {
        let token = try bearer(request)
        if isAdminToken(token) { return .admin }
        if let cached = try cachedUser(token) { return cached }
        let (appId, parsed) = try audience(token)
        guard let entry = try await apps.entry(appId) else { throw APIError.unauthorized("invalid token: unknown audience") }
        return try verifyUser(token, parsed, entry: entry)
    }

    /// Like `authenticate`, but only from memory: nil when the token's app is not cached yet.
    func authenticateInline(_ request: HTTPRequest) throws -> Principal? {
        let token = try bearer(request)
        if isAdminToken(token) { return .admin }
        if let cached = try cachedUser(token) { return cached }
        let (appId, parsed) = try audience(token)
        guard let entry = apps.cached(appId) else { return nil }
        return try verifyUser(token, parsed, entry: entry)
    }

    /// Compared as SHA-256 digests in constant time, so neither content nor length leaks through timing.
    private func isAdminToken(_ token: String) -> Bool {
        guard let adminTokenDigest else { return false }
        return Crypto.constantTimeEqual(Crypto.sha256(Array(token.utf8)), adminTokenDigest)
    }

    /// The app a JWT claims to be for (`aud`), read before verification to find the secret that must have signed it.
    private func audience(_ token: String) throws -> (String, JWT.Parsed) {
        let parsed: JWT.Parsed
        do {
            parsed = try JWT.parse(token)
        } catch {
            throw APIError.unauthorized("invalid token: \(Self.describe(error))")
        }
        guard parsed.claims.audience.count == 1, let appId = parsed.claims.audience.first, Identifiers.isValidAppId(appId) else {
            throw APIError.unauthorized("invalid token: unknown audience")
        }
        return (appId, parsed)
    }

    /// A token verified before with the app's current secret, still within its validity; nil to verify it now.
    private func cachedUser(_ token: String) throws -> Principal? {
        guard let hit = tokens.lookup(token), let entry = apps.cached(hit.appId), entry.app.signingSecret == hit.secret else { return nil }
        let now = configuration.clock()
        guard now <= hit.expiresAt + JWT.leeway else { throw APIError.unauthorized("invalid token: token expired") }
        if let notBefore = hit.notBefore, now + JWT.leeway < notBefore { throw APIError.unauthorized("invalid token: token not yet valid") }
        return .user(appId: hit.appId, userId: hit.userId)
    }

    private func verifyUser(_ token: String, _ parsed: JWT.Parsed, entry: AppCache.Entry) throws -> Principal {
        do {
            let verified = try JWT.verify(parsed, secret: entry.app.signingSecret, now: configuration.clock())
            // nbf and iat both say "not before"; the later one is what counts.
            let notBefore = [verified.notBefore, verified.issuedAt].compactMap { $0 }.max()
            tokens.store(token, TokenCache.Entry(appId: entry.app.id, userId: verified.subject, secret: entry.app.signingSecret,
                                                 expiresAt: verified.expiresAt, notBefore: notBefore))
            return .user(appId: entry.app.id, userId: verified.subject)
        } catch {
            throw APIError.unauthorized("invalid token: \(Self.describe(error))")
        }
    }

    private static func describe(_ failure: JWT.Failure) -> String {
        switch failure {
        case .malformed(let reason): reason
        case .unsupportedAlgorithm(let algorithm): "algorithm \"\(algorithm)\" is not accepted; tokens are HS256"
        case .badSignature: "signature does not verify"
        case .expired: "token expired"
        case .notYetValid: "token not yet valid"
        }
    }

    /// Only the operator.
    func requireAdmin(_ request: HTTPRequest) async throws {
        guard try await authenticate(request) == .admin else {
            throw APIError.forbidden("this endpoint is for the operator")
        }
    }

    /// The operator, or the user the path names, of the app the path names.
    func requireUser(_ request: HTTPRequest, _ context: RouteContext) async throws {
        try authorizeUser(try await authenticate(request), context)
    }

    func authorizeUser(_ principal: Principal, _ context: RouteContext) throws {
        switch principal {
        case .admin: return
        case .user(let appId, let userId):
            guard appId == context.parameter("appId") else { throw APIError.forbidden("the token is for another app") }
            guard userId == context.parameter("userId") else { throw APIError.forbidden("the token is for another user") }
        }
    }

    /// The operator, or any user of the app the path names.
    func requireAppReader(_ request: HTTPRequest, _ context: RouteContext) async throws {
        if case .user(let appId, _) = try await authenticate(request), appId != context.parameter("appId") {
            throw APIError.forbidden("the token is for another app")
        }
    }
}
