import TabStoreApplication
import TabStoreAuth
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// Who is calling.
enum Principal: Sendable, Equatable {
    /// The token configured at start (`--admin-token`, `TAB_SERVER_OPERATOR_TOKEN`): named "bootstrap", admin scope.
    case admin
    /// A named operator token (`POST /v1/operator-tokens`), checked against the database at every request.
    /// `expiresAt`: seconds since 1970, nil for a token without expiry.
    case operatorToken(name: String, readOnly: Bool, expiresAt: Int?)
    /// `secret`: the app's signing secret that verified the token.
    case user(appId: Identifier, userId: Identifier, expiresAt: Int, secret: String)

    /// When the credentials expire (seconds since 1970); nil for the configured operator token and a named one
    /// without expiry.
    var expiresAt: Int? {
        switch self {
        case .admin: nil
        case .operatorToken(_, _, let expiresAt): expiresAt
        case .user(_, _, let expiresAt, _): expiresAt
        }
    }

    /// The named operator token's name: what a revocation ends; nil for the configured token and a user.
    var revocableOperatorName: String? {
        if case .operatorToken(let name, _, _) = self { return name }
        return nil
    }

    /// The operator token's name; nil for a user.
    var operatorName: String? {
        switch self {
        case .admin: Self.bootstrapName
        case .operatorToken(let name, _, _): name
        case .user: nil
        }
    }

    /// Whether the caller may only read (an operator token of the `read` scope).
    var readOnly: Bool {
        if case .operatorToken(_, let readOnly, _) = self { return readOnly }
        return false
    }

    /// The name of the token configured at start (`TAB_SERVER_OPERATOR_TOKEN`): the first operator's.
    static let bootstrapName = "bootstrap"

    /// The signing secret that verified the credentials; nil for the operator's token.
    var secret: String? {
        if case .user(_, _, _, let secret) = self { return secret }
        return nil
    }
}

/// Identifies the caller from the request head (the operator's token, or an app user's HS256 JWT) and
/// enforces each route's declared `RouteAccess` (`Authenticator+Access`). It runs one step before the
/// handler, and also alone from `admit`, before the server reads a body.
struct Authenticator: Sendable {
    let configuration: APIConfiguration
    let apps: AppCache
    let pointReads: (any SynchronousPointReads)?
    /// For the read a refused token costs whether or not its app is cached.
    private let store: any TabStoreBackend
    /// Verified user tokens (see `TokenCache`); guards its own state.
    private let tokens: TokenCache
    /// Verifies tokens that name an unknown app, so they cost what a known app's do (see `verifyUser`).
    private let unknownAppSecret = Crypto.newSecret()
    private let adminTokenDigest: [UInt8]?

    init(_ services: APIServices) {
        configuration = services.configuration
        apps = services.apps
        pointReads = services.pointReads
        store = services.store
        tokens = services.tokens
        adminTokenDigest = services.configuration.adminToken.map { Crypto.sha256(Array($0.utf8)) }
    }

    /// The bearer token of the request, or 401.
    private func bearer(_ head: HTTPRequestHead) throws -> String {
        guard let value = head.headers["Authorization"] else {
            throw APIError.unauthorized("send Authorization: Bearer <token>", credentialsSent: false)
        }
        guard head.headers.count("Authorization") == 1 else { throw APIError.unauthorized("send exactly one Authorization header") }
        // RFC 6750 §2.1: "Bearer" (any case), one space, the token.
        let bytes = value.utf8
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")), bytes.distance(from: bytes.startIndex, to: space) == 6,
              String(value[..<space]).lowercased() == "bearer"
        else {
            // Another scheme (Basic, ...) carries no Bearer credentials: the challenge names none as invalid (§3.1).
            throw APIError.unauthorized("the Authorization header must be Bearer <token>", credentialsSent: false)
        }
        let token = String(value[value.index(after: space)...].trimmingOWS())
        guard !token.isEmpty else { throw APIError.unauthorized("the Authorization header must be Bearer <token>", credentialsSent: false) }
        return token
    }

    /// Identifies the caller: the operator's token, or an app user's HS256 JWT.
    /// - Parameter pathApp: the path's `{appId}` (when valid): the app a token listing several audiences is checked for.
    /// - Throws: `APIError` 401 for missing, malformed, forged, expired or not-yet-valid credentials.
    func authenticate(_ head: HTTPRequestHead, pathApp: Identifier?) async throws -> Principal {
        if let principal = try authenticateNow(head, pathApp: pathApp) { return principal }
        // Only when the token's app must be loaded from a backend that waits (or every reader was busy), or when
        // the token may be a named operator token: those are read from the database at every request, so a
        // revoked or expired one is refused on every replica at once.
        let token = try bearer(head)
        if !Self.jwtShaped(token) { return try await namedOperator(token) }
        let (appId, parsed) = try audience(token, pathApp: pathApp)
        let wasCached = apps.cached(appId) != nil
        do {
            return try verifyUser(token, parsed, app: try await apps.entry(appId)?.app)
        } catch let error as APIError {
            // Refused for an app in the cache: the read an unknown app costs is made too (`authenticateNow`).
            if wasCached { _ = try? await store.app(appId.text) }
            throw error
        }
    }

    /// Like `authenticate`, without waiting: from memory, or one point read of the app on the embedded
    /// database; nil when the app would have to be loaded from a backend that waits.
    /// - Throws: `APIError` 401 as `authenticate`.
    func authenticateNow(_ head: HTTPRequestHead, pathApp: Identifier?) throws -> Principal? {
        let token = try bearer(head)
        // A verified user token first: it costs a lookup, the operator's check a SHA-256 of the token. (A token
        // in that cache was verified as an app's JWT; what it tells about the operator's token is nothing.)
        if let cached = try cachedUser(token, pathApp: pathApp) { return cached }
        if isAdminToken(token) { return .admin }
        if !Self.jwtShaped(token) {
            // A named operator token is read from the database by `authenticate`; anything else is refused now,
            // from the head, before a body is read.
            guard Self.operatorTokenShaped(token) else { throw APIError.unauthorized("invalid token") }
            return nil
        }
        let (appId, parsed) = try audience(token, pathApp: pathApp)
        if let entry = apps.cached(appId) {
            do {
                return try verifyUser(token, parsed, app: entry.app)
            } catch {
                // A refused token for an app in the cache costs what one for an unknown app costs (the app's read,
                // then a throwaway HMAC), so the time of a refusal does not tell which apps are in use.
                guard let reads = pointReads else { return nil }  // `authenticate` reads it, as for an unknown app
                _ = try? reads.appNow(appId.text)
                throw error
            }
        }
        guard let reads = pointReads else { return nil }
        let app: AppRecord?
        do {
            app = try reads.appNow(appId.text)
        } catch is ReadersBusy {
            return nil  // every reader is busy: decide later, off the event loop
        }
        return try verifyUser(token, parsed, app: app)
    }

    /// Compared as SHA-256 digests in constant time, so neither content nor length leaks through timing.
    private func isAdminToken(_ token: String) -> Bool {
        guard let adminTokenDigest else { return false }
        return Crypto.constantTimeEqual(Crypto.sha256(Array(token.utf8)), adminTokenDigest)
    }

    /// What `newOperatorToken` mints: `tso_` and 43 base64url characters (32 random bytes).
    static func operatorTokenShaped(_ token: String) -> Bool {
        token.utf8.count == 47 && token.utf8.starts(with: "tso_".utf8)
            && token.utf8.dropFirst(4).allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
            }
    }

    /// A new named operator token.
    static func newOperatorToken() -> String { "tso_" + Crypto.newSecret() }

    /// A JWT has exactly two dots; an operator token (base64url) none.
    static func jwtShaped(_ token: String) -> Bool {
        // Over the contiguous bytes: `count(where:)` on `String.UTF8View` walked them one index at a time.
        var bytes = token
        return bytes.withUTF8 { $0.reduce(0) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 } } == 2
    }

    /// A named operator token: looked up by its SHA-256 digest (the digest compared again in constant time), refused
    /// once expired or revoked.
    /// - Throws: `APIError` 401.
    private func namedOperator(_ token: String) async throws -> Principal {
        // Not a token this server mints: refused without hashing or reading.
        guard Self.operatorTokenShaped(token) else { throw APIError.unauthorized("invalid token") }
        let digest = Crypto.sha256(Array(token.utf8))
        guard let record = try await store.operatorToken(digest: digest), Crypto.constantTimeEqual(record.digest, digest) else {
            throw APIError.unauthorized("invalid token")
        }
        if let expiresAt = record.expiresAt, Int(configuration.clock()) >= expiresAt { throw APIError.unauthorized("invalid token: token expired") }
        return .operatorToken(name: record.name, readOnly: record.scope != "admin", expiresAt: record.expiresAt)
    }

    /// The app whose secret must have signed a JWT, read from its (unverified) claims before verification.
    private func audience(_ token: String, pathApp: Identifier?) throws -> (Identifier, JWT.Parsed) {
        // Not the operator's token, and not shaped like a JWT either: say so plainly, without explaining JWTs
        // to someone who may have mistyped the operator's token.
        guard Self.jwtShaped(token) else { throw APIError.unauthorized("invalid token") }
        let parsed: JWT.Parsed
        do {
            parsed = try JWT.parse(token)
        } catch {
            throw APIError.unauthorized("invalid token: \(Self.describe(error))")
        }
        guard let appId = Self.verifyingApp(parsed.claims.audience, pathApp: pathApp), appId.isValidAppId else {
            throw APIError.unauthorized(Self.notVerified)
        }
        return (appId, parsed)
    }

    /// RFC 7519 §4.1.3: a token is for every audience it lists. The app whose secret verifies it is the path's
    /// `{appId}` when listed; else its only audience (verified, then refused by `permit` if it is another
    /// app's); a token listing several apps but not the path's names no app to verify it with (nil).
    static func verifyingApp(_ audience: [Identifier], pathApp: Identifier?) -> Identifier? {
        if let pathApp, audience.contains(pathApp) { return pathApp }
        return audience.count == 1 ? audience[0] : nil
    }

    /// One answer for a forged signature and an unknown audience, so a token cannot probe which apps exist.
    static let notVerified = "invalid token: its signature does not verify for its audience"

    /// A token verified before with the app's current secret, for the app this request would verify it with,
    /// still within its validity; nil to verify it now.
    private func cachedUser(_ token: String, pathApp: Identifier?) throws -> Principal? {
        guard let hit = tokens.lookup(token), Self.verifyingApp(hit.audience, pathApp: pathApp) == hit.appId,
              let entry = apps.cached(hit.appId), entry.app.signingSecret == hit.secret
        else { return nil }
        do {
            try JWT.checkTimes(expiresAt: hit.expiresAt, notBefore: hit.notBefore, now: configuration.clock())
        } catch {
            throw APIError.unauthorized("invalid token: \(Self.describe(error))")
        }
        return .user(appId: hit.appId, userId: hit.userId, expiresAt: hit.expiresAt, secret: hit.secret)
    }

    /// Verifies a user token against its app's secret (`app` nil: no such app, answered like a bad signature).
    private func verifyUser(_ token: String, _ parsed: JWT.Parsed, app: AppRecord?) throws -> Principal {
        let verified: JWT.Claims
        do {
            // An unknown app still costs one HMAC (with a throwaway secret), so timing tells nothing either.
            verified = try JWT.verify(parsed, secret: app?.signingSecret ?? unknownAppSecret, now: configuration.clock())
        } catch .badSignature {
            throw APIError.unauthorized(Self.notVerified)
        } catch {
            throw APIError.unauthorized("invalid token: \(Self.describe(error))")
        }
        guard let app else { throw APIError.unauthorized(Self.notVerified) }
        let appId = Identifier(app.id)
        tokens.store(token, TokenCache.Entry(appId: appId, audience: verified.audience, userId: verified.subject, secret: app.signingSecret,
                                             expiresAt: verified.expiresAt, notBefore: verified.notBefore(orIssuedAt: true)))
        return .user(appId: appId, userId: verified.subject, expiresAt: verified.expiresAt, secret: app.signingSecret)
    }

    private static func describe(_ failure: JWT.Failure) -> String {
        switch failure {
        case .malformed(let reason): reason
        case .unsupportedAlgorithm(let algorithm): "algorithm \"\(algorithm.prefix(32))\" is not accepted; tokens are HS256"
        case .badSignature: "its signature does not verify for its audience"
        case .expired: "token expired"
        case .notYetValid: "token not yet valid"
        }
    }
}
