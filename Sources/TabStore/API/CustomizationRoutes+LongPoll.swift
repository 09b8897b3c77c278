import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport

/// `GET …/customization?waitSeconds=N` with `If-None-Match`: answered as soon as the customization is no
/// longer the one the client has, else 304 after N seconds (API.md "Change feed", long poll).
struct LongPollRequest: Sendable {
    let seconds: Int
    /// The client's `If-None-Match`.
    let has: EntityTagCondition

    /// The long poll a GET asks for; nil for a plain GET (no `waitSeconds`), and for one without
    /// `If-None-Match` (nothing to wait for: it is answered at once).
    /// - Throws: `APIError` 400 for a `waitSeconds` that is not 1-60, or a malformed `If-None-Match`.
    init?(_ request: HTTPRequest) throws {
        guard let seconds = try CustomizationRoutes.integerParameter(request, "waitSeconds", in: 1...APIConfiguration.maxWaitSeconds) else {
            return nil
        }
        guard let has = try Preconditions(request).ifNoneMatch else { return nil }
        self.seconds = seconds
        self.has = has
    }

    /// Whether the client has this revision: `If-None-Match` names its ETag (`"3.2"`), or only its revision
    /// (`"3"`, as API.md writes it), or is `*` and the customization exists.
    func clientHas(revision: Int, schemaVersion: Int) -> Bool {
        let etag = CustomizationRoutes.customizationTag(revision: revision, schemaVersion: schemaVersion)
        if has.matchesWeakly(etag, exists: revision > 0) { return true }
        guard case .tags(let tags) = has else { return false }
        let bare = String(revision)
        return tags.contains { Identifier($0.opaque) == Identifier(bare) }
    }
}

extension CustomizationRoutes {
    /// Registers a `LongPoll` with the user's followers first, then reads: a commit before the registration
    /// is in the read, and one after it is published to the poll, so no change falls in between.
    /// - Throws: `APIError` 429 when the user has too many followers, 503 when too many long polls wait.
    func longPoll(_ longPoll: LongPollRequest, _ request: HTTPRequest, _ context: RouteContext, _ key: UserKey,
                  entry: AppCache.Entry) async throws -> HTTPResponse {
        let poll = LongPoll { state in longPoll.clientHas(revision: state.revision, schemaVersion: state.schemaVersion) }
        let admission = services.changes.follow(key, poll, kind: .longPoll, signedByApp: context.credentialsKey != nil)
        defer { if admission == .followed { services.changes.unfollow(key, poll) } }
        switch admission {
        case .followed, .draining: break  // draining: answered at once below
        case .userLimit: throw Self.tooManyFollowers(services.configuration.maxFollowersPerUser)
        case .serverLimit:
            var error = APIError(status: 503, slug: .tooManyWaiting, title: "Service unavailable", detail: "too many long polls wait; retry in a second")
            error.headers.add("Retry-After", "1")
            throw error
        }
        if admission == .followed { try await services.requireCredentialsCurrent(context, key.appId) }
        let record = try await services.store.customization(appId: key.appId.text, userId: key.userId.text)
        let schema = try entry.requireSchema()
        let etag = Self.customizationTag(revision: record?.revision ?? 0, schemaVersion: schema.version)
        guard admission == .followed, longPoll.clientHas(revision: record?.revision ?? 0, schemaVersion: schema.version) else {
            return try customizationAnswer(request, key, entry: entry, record: record)!
        }
        switch await poll.wait(seconds: longPoll.seconds) {
        case .changed(let state):
            return customizationResponse(document: state.document, etag: state.etag)
        case .ended(.appDeleted):
            throw APIError.notFound(.appNotFound, "no app \"\(key.appId)\"")
        case .ended(.credentialsRevoked):
            throw APIError.credentialsRevoked
        case .timedOut, .ended(.draining), .cancelled:
            return HTTPResponse(status: 304, headers: Preconditions.validatorHeaders(etag, cacheControl: Self.userCacheControl))
        }
    }

    /// 429: one user follows from too many places at once.
    static func tooManyFollowers(_ limit: Int) -> APIError {
        var error = APIError(status: 429, slug: .tooManyFollowers, title: "Too many requests",
                             detail: "at most \(limit) change-feed streams and long polls per user at once; close one first")
        error.headers.add("Retry-After", "1")
        return error
    }
}
