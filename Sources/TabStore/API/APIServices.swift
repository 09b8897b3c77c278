import TabStoreApplication
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// What the route groups, the authenticator and the middleware share: the application layer (storage, its
/// caches, the write use case), the configuration, the run state, the token cache and where to report. Made once
/// per `APIResponder`; every member is an immutable value or a `Sendable` object that guards its own state.
struct APIServices: Sendable {
    /// The application's state and use cases (`ApplicationServices`); the members below forward to it.
    let application: ApplicationServices
    let configuration: APIConfiguration
    let serverState: ServerState
    let metrics: Metrics
    /// Verified user tokens, so a client that sends the same JWT on every request pays for its check once.
    let tokens: TokenCache

    init(store: any TabStoreBackend, configuration: APIConfiguration, serverState: ServerState, metrics: Metrics, logger: Logger) {
        self.configuration = configuration
        self.serverState = serverState
        self.metrics = metrics
        self.tokens = TokenCache(budget: configuration.tokenCacheBytes)
        self.application = ApplicationServices(store: store, configuration: configuration.application, logger: logger)
    }

    var store: any TabStoreBackend { application.store }
    var pointReads: (any SynchronousPointReads)? { application.reads.pointReads }
    var logger: Logger { application.logger }
    var apps: AppCache { application.apps }
    var userLocks: KeyedLock<UserKey> { application.userLocks }
    var changes: ChangeHub { application.changes }
    var representations: ByteBoundedCache<[UInt8]> { application.representations }
    var documents: DecodedDocuments { application.documents }
    var historyPages: ByteBoundedCache<[UInt8]> { application.historyPages }
    var historyReads: HistoryReads { application.historyReads }
    var writes: CustomizationWrites { application.writes }

    /// The app named in the path, or 404.
    /// - Throws: `APIError` 404, storage errors.
    func requireApp(_ context: RouteContext) async throws -> AppCache.Entry {
        let appId = try context.appId()
        guard let entry = try await apps.entry(appId) else {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        }
        return entry
    }
}

extension APIConfiguration {
    /// What the application layer is configured with.
    var application: ApplicationServices.Configuration {
        ApplicationServices.Configuration(
            writes: CustomizationWrites.Limits(maxCustomizationBytes: maxCustomizationBytes, historyRevisions: historyRevisions,
                                               idempotencySeconds: idempotencySeconds, maxIdempotentAnswersPerUser: maxIdempotentAnswersPerUser,
                                               clock: clock),
            maxFollowersPerUser: maxFollowersPerUser, maxLongPolls: maxLongPolls, representationCacheBytes: representationCacheBytes,
            documentCacheBytes: documentCacheBytes, historyPageCacheBytes: historyPageCacheBytes,
            historyReads: HistoryReads.Limits(perUserWaiting: historyReadsWaitingPerUser, concurrent: concurrentHistoryReads,
                                              bytesPerSecond: historyBytesPerUserPerSecond, clock: clock),
            historyReadPause: historyReadPause)
    }
}

extension AppCache.Entry {
    /// The app's current schema, or 404 when none was registered yet.
    /// - Throws: `APIError` 404 `no-schema`.
    func requireSchema() throws -> SchemaIndex {
        guard let schema else {
            throw APIError.notFound(.noSchema, "app \"\(app.id)\" has no schema yet; register one with PUT /v1/apps/\(app.id)/schema")
        }
        return schema
    }
}
