import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// The change feed, `GET …/customization/events` (docs/devices.md "Follow changes: the change feed"): server-sent events, first the current
/// customization, then one event per committed revision.
extension CustomizationRoutes {
    static let feedHeaders = HTTPHeaders([
        ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
        // Buffering proxies (nginx) would hold events back.
        ("X-Accel-Buffering", "no"),
    ])

    /// Opens a stream. Reading the current customization and registering the stream happen in the user's write
    /// turn, where every publication for the user happens too: the first event is never older than one the
    /// stream is told about, and no commit falls between the two.
    /// - Throws: `APIError` 404 (app, schema), 429 (the user follows from too many places), 503 (draining).
    func events(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let schema = try await services.servedSchema(request, entry)
        let key = try userKey(context)
        // Past `exp` (accepted within the leeway) the stream would send token-expired at once, and an EventSource
        // would reconnect every second until the leeway ran out: 401 now, so the client refreshes its token.
        if let expiresAt = context.credentialsExpireAt, services.configuration.clock() >= expiresAt { throw APIError.tokenExpired }
        // The id of the event the client has (a reconnecting EventSource sends the header).
        let lastEventId = request.headers["Last-Event-ID"] ?? request.queryParameter("lastEventId")
        let stream = FeedStream(key: key, services: services, expiresAt: context.credentialsExpireAt,
                                pinned: request.queryParameter("schemaVersion") == nil ? nil : schema)
        try await services.userLocks.withLock(key) { () async throws -> Void in
            let record = try await services.application.reads.record(key)
            let document = try services.application.reads.customizationDocument(record, key, schema: schema)!
            let state = CustomizationState(revision: record?.revision ?? 0, schemaVersion: schema.version, document: document)
            if lastEventId.map({ Identifier($0) }) != Identifier(state.etag.opaque) { stream.queue(state) }
            switch services.changes.follow(key, stream, kind: .stream, verifiedBy: context.credentialsKey,
                                          operatorToken: context.revocableOperatorName) {
            case .followed: break
            case .userLimit: throw Self.tooManyFollowers(services.configuration.maxFollowersPerUser)
            case .draining, .serverLimit:
                throw APIError(
                    status: 503, slug: .draining, title: "Service unavailable", detail: "the server is shutting down; reconnect in a moment")
            }
            do {
                try await services.requireCredentialsCurrent(context, key.appId)
            } catch {
                services.changes.unfollow(key, stream)
                throw error
            }
        }
        return HTTPResponse(status: 200, headers: Self.feedHeaders, stream: stream)
    }
}
