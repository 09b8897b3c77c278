import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// `GET …/customization?waitSeconds=N` with `If-None-Match`: answered as soon as the customization is no
/// longer the one the client has, else 304 after N seconds (docs/devices.md "Follow changes: the change feed", long poll).
struct LongPollRequest: Sendable {
    let seconds: Int
    /// The client's `If-None-Match`.
    let has: EntityTagCondition
    /// The client's `If-Match`, evaluated first (RFC 9110 §13.2.2), as for a plain GET.
    let ifMatch: EntityTagCondition?

    /// The long poll a GET asks for; nil for a plain GET (no `waitSeconds`), and for one without
    /// `If-None-Match` (nothing to wait for: it is answered at once).
    /// - Throws: `APIError` 400 for a `waitSeconds` that is not 1-60, or a malformed `If-None-Match`.
    init?(_ request: HTTPRequest) throws {
        guard let seconds = try CustomizationRoutes.integerParameter(request, "waitSeconds", in: 1...APIConfiguration.maxWaitSeconds) else {
            return nil
        }
        let preconditions = try Preconditions(request)
        guard let has = preconditions.ifNoneMatch else { return nil }
        self.seconds = seconds
        self.has = has
        ifMatch = preconditions.ifMatch
    }

    /// Whether the client has this revision: `If-None-Match` names its ETag (`"3.2"`), or only its revision
    /// (`"3"`, as docs/devices.md writes it), or is `*` and the customization exists.
    func clientHas(revision: Int, schemaVersion: Int) -> Bool {
        let etag = CustomizationRoutes.customizationTag(revision: revision, schemaVersion: schemaVersion)
        if has.matchesWeakly(etag, exists: revision > 0) { return true }
        guard case .tags(let tags) = has else { return false }
        let bare = String(revision)
        return tags.contains { Identifier($0.opaque) == Identifier(bare) }
    }
}

extension CustomizationRoutes {
    /// How a long poll begins: answered at once, or waiting for a change from the ETag the client has.
    private enum Start {
        case answer(HTTPResponse)
        /// The client has the current representation, whose ETag is this; wait at most `seconds`, `expires`:
        /// the token's `exp` comes first.
        case wait(has: EntityTag, seconds: Int, expires: Bool)
    }

    /// In the user's write turn, where every publication for the user happens (so none falls between them):
    /// registers a `LongPoll` with the user's followers, reads the app (after registering, so a schema version
    /// registered meanwhile is either in the read or republished to the poll) and the customization, and turns
    /// what the client has into the current representation's ETag, which the poll then waits to change.
    /// - Throws: `APIError` 429 when the user has too many followers, 503 when too many long polls wait, 401
    ///   when the app's signing secret was rotated, 404 when the app is gone.
    /// - Parameter pinned: the version the client named (`?schemaVersion=`), nil to follow the current one.
    func longPoll(_ longPoll: LongPollRequest, _ request: HTTPRequest, _ context: RouteContext, _ key: UserKey,
                  pinned: SchemaIndex?) async throws -> HTTPResponse {
        let poll = LongPoll(pinned: pinned)
        let start = try await services.userLocks.withLock(key) { () async throws -> Start in
            let admission = services.changes.follow(key, poll, kind: .longPoll, verifiedBy: context.credentialsKey,
                                                        operatorToken: context.revocableOperatorName)
            switch admission {
            case .followed, .draining: break  // draining: answered at once below
            case .userLimit: throw Self.tooManyFollowers(services.configuration.maxFollowersPerUser)
            case .serverLimit:
                var error = APIError(
                    status: 503, slug: .tooManyWaiting, title: "Service unavailable", detail: "too many long polls wait; retry in a second")
                error.headers.add("Retry-After", "1")
                throw error
            }
            do {
                if admission == .followed { try await services.requireCredentialsCurrent(context, key.appId) }
                let (entry, record) = try await read(key)
                let schema = try pinned ?? entry.requireSchema()
                if let pinned, pinned.version < entry.app.minimumSchemaVersion {
                    throw APIServices.retired(pinned.version, minimum: entry.app.minimumSchemaVersion, current: entry.app.schemaVersion)
                }
                let schemaVersion = schema.version
                let etag = Self.customizationTag(revision: record?.revision ?? 0, schemaVersion: schemaVersion)
                // A stale If-Match is 412 before anything waits, as a plain GET answers it.
                if let ifMatch = longPoll.ifMatch, !ifMatch.matchesStrongly(etag, exists: (record?.revision ?? 0) > 0) {
                    throw APIError.preconditionFailed(current: etag, detail: "If-Match does not name the current representation")
                }
                let clientHas = longPoll.clientHas(revision: record?.revision ?? 0, schemaVersion: schemaVersion)
                guard admission == .followed, clientHas else {
                    if admission == .followed { services.changes.unfollow(key, poll) }
                    // Draining: what the client has is answered at once, with the current ETag.
                    if clientHas { return .answer(notModified(etag)) }
                    return .answer(try customizationAnswer(request, key, schema: schema, record: record)!)
                }
                // The token's `exp` bounds the wait: past it (accepted within the leeway) nothing waits, and a
                // poll still waiting when it passes ends then, with 401, as a stream ends with token-expired.
                var seconds = longPoll.seconds
                var expires = false
                if let expiresAt = context.credentialsExpireAt {
                    let left = expiresAt - services.configuration.clock()  // claims are bounded: no overflow
                    if left <= 0 { throw APIError.tokenExpired }
                    if left < seconds { (seconds, expires) = (left, true) }
                }
                poll.waitForChange(from: etag)
                return .wait(has: etag, seconds: seconds, expires: expires)
            } catch {
                if admission == .followed { services.changes.unfollow(key, poll) }
                throw error
            }
        }
        let (has, seconds, expires): (EntityTag, Int, Bool)
        switch start {
        case .answer(let response): return response
        case .wait(let etag, let wait, let tokenExpires): (has, seconds, expires) = (etag, wait, tokenExpires)
        }
        let outcome = await poll.wait(seconds: seconds)
        services.changes.unfollow(key, poll)
        switch outcome {
        case .changed(let state):
            return customizationResponse(document: state.document, etag: state.etag)
        case .ended(.appDeleted):
            throw APIError.notFound(.appNotFound, "no app \"\(key.appId)\"")
        case .ended(.credentialsRevoked):
            throw APIError.credentialsRevoked
        case .ended(.operatorTokenRevoked):
            throw APIError.operatorTokenRevoked
        case .ended(.schemaVersionRetired(let minimum)):
            throw APIServices.retired(pinned?.version ?? 0, minimum: minimum, current: try await read(key).0.app.schemaVersion)
        case .cancelled:
            return notModified(has)  // nobody reads it: the client left
        case .timedOut where expires:
            throw APIError.tokenExpired
        case .timedOut, .ended(.draining):
            // What is current now: a change no publication announced (another process on the same database,
            // a publication still on its way) is answered, never a 304 with an ETag that is out of date.
            let (entry, record) = try await read(key)
            let schema = try pinned ?? entry.requireSchema()
            let etag = Self.customizationTag(revision: record?.revision ?? 0, schemaVersion: schema.version)
            if etag.weakMatches(has) { return notModified(etag) }
            return customizationResponse(document: try services.application.reads.customizationDocument(record, key, schema: schema)!, etag: etag)
        }
    }

    /// The app as it is now and the user's stored customization.
    /// - Throws: `APIError` 404 when the app is gone; storage errors.
    private func read(_ key: UserKey) async throws -> (AppCache.Entry, CustomizationRecord?) {
        guard let entry = try await services.apps.entry(key.appId) else { throw APIError.notFound(.appNotFound, "no app \"\(key.appId)\"") }
        return (entry, try await services.application.reads.record(key))
    }

    private func notModified(_ etag: EntityTag) -> HTTPResponse {
        HTTPResponse(status: 304, headers: Preconditions.validatorHeaders(etag, cacheControl: Self.userCacheControl))
    }

    /// 429: one user follows from too many places at once.
    static func tooManyFollowers(_ limit: Int) -> APIError {
        var error = APIError(status: 429, slug: .tooManyFollowers, title: "Too many requests",
                             detail: "at most \(limit) change-feed streams and long polls per user at once; close one first")
        error.headers.add("Retry-After", "1")
        return error
    }
}
