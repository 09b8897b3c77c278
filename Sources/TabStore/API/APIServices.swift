import TabStoreApplication
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// What the route groups, the authenticator and the middleware share: storage, the app cache, the
/// configuration, the run state and where to report. Made once per `APIResponder`; every member is an
/// immutable value or a `Sendable` object that guards its own state.
struct APIServices: Sendable {
    let store: any TabStoreBackend
    /// Point reads answered without waiting, when the backend offers them: cast once here, not per request.
    let pointReads: (any SynchronousPointReads)?
    let configuration: APIConfiguration
    let serverState: ServerState
    let metrics: Metrics
    let logger: Logger
    /// Apps and their current schema; the operator's writes invalidate entries.
    let apps: AppCache
    /// Writes of one user take turns here (see `CustomizationWrites.write`); so do erases and the
    /// publications that follow each, so followers learn of one user's revisions in commit order.
    let userLocks: KeyedLock<UserKey>
    /// Long polls and change-feed streams, told of each commit.
    let changes: ChangeHub
    /// Encoded representations computed from a stored customization (layouts, customizations reconciled
    /// with a newer schema), keyed by app, user and ETag. An ETag names exactly one representation of a
    /// user's resource, so an entry never goes stale: nothing invalidates it, it only ages out.
    let representations: ByteBoundedCache<[UInt8]>
    /// Decoded stored documents, so a write starts from its user's last document without parsing it again.
    let documents: DecodedDocuments
    /// Rendered history pages, keyed by everything a page is a function of, the user's revision at read time
    /// included (`CustomizationRoutes.historyPageKey`): a write, an erase or another replica's change makes a
    /// new key, so an entry never goes stale; it only ages out (or goes with its app).
    let historyPages: ByteBoundedCache<[UInt8]>
    /// Admission of history pages and exports: one read per user at a time, a few in the store at once.
    let historyReads: HistoryReads
    /// Verified user tokens, so a client that sends the same JWT on every request pays for its check once.
    let tokens: TokenCache
    /// The write of a customization (PUT, PATCH, DELETE, revert), over the members above.
    let writes: CustomizationWrites

    init(store: any TabStoreBackend, configuration: APIConfiguration, serverState: ServerState, metrics: Metrics, logger: Logger) {
        self.store = store
        self.pointReads = store as? any SynchronousPointReads
        self.configuration = configuration
        self.serverState = serverState
        self.metrics = metrics
        self.logger = logger
        let apps = AppCache(store: store), userLocks = KeyedLock<UserKey>()
        let changes = ChangeHub(maxPerUser: configuration.maxFollowersPerUser, maxLongPolls: configuration.maxLongPolls)
        let documents = DecodedDocuments(budget: configuration.documentCacheBytes)
        self.apps = apps
        self.userLocks = userLocks
        self.changes = changes
        self.representations = ByteBoundedCache(budget: configuration.representationCacheBytes)
        self.documents = documents
        self.writes = CustomizationWrites(
            store: store, apps: apps, userLocks: userLocks, changes: changes, documents: documents,
            limits: CustomizationWrites.Limits(maxCustomizationBytes: configuration.maxCustomizationBytes, historyRevisions: configuration.historyRevisions,
                                               idempotencySeconds: configuration.idempotencySeconds,
                                               maxIdempotentAnswersPerUser: configuration.maxIdempotentAnswersPerUser, clock: configuration.clock))
        self.tokens = TokenCache(budget: configuration.tokenCacheBytes)
        // Few shards: a page may be a MiB and more, and an entry may cost at most a quarter of its shard.
        self.historyPages = ByteBoundedCache(budget: configuration.historyPageCacheBytes, shards: 2)
        self.historyReads = HistoryReads(HistoryReads.Limits(perUserWaiting: configuration.historyReadsWaitingPerUser,
                                                             concurrent: configuration.concurrentHistoryReads,
                                                             bytesPerSecond: configuration.historyBytesPerUserPerSecond, clock: configuration.clock),
                                         pause: configuration.historyReadPause)
        observeReplicas()
    }

    /// `representations`' key: the resource ("layout", "customization"), its app and user, and its ETag.
    static func representationKey(_ resource: String, _ key: UserKey, _ etag: EntityTag) -> ByteKey {
        ByteKey(key.appId.text, key.userId.text, resource, etag.opaque)
    }

    /// Keeps a representation's bytes under its key, costed as the bytes plus the key and the entry's bookkeeping.
    func keepRepresentation(_ cacheKey: ByteKey, _ bytes: [UInt8]) {
        representations.put(cacheKey, bytes, cost: bytes.count + cacheKey.bytes.count + 96)
    }

    /// The app named in the path, or 404.
    /// - Throws: `APIError` 404, storage errors.
    func requireApp(_ context: RouteContext) async throws -> AppCache.Entry {
        let appId = try context.appId()
        guard let entry = try await apps.entry(appId) else {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        }
        return entry
    }

    /// Calls `body` with every stored customization of an app that decodes; one that does not (damaged, or
    /// written by a future version) is skipped, counted and logged (never its content), so one bad row never
    /// fails a whole-app operation.
    /// - Returns: how many rows were skipped.
    /// - Throws: storage errors and what `body` throws.
    func forEachReadableCustomization(_ appId: Identifier, _ body: (CustomizationRecord, Customization) throws -> Void) async throws -> Int {
        var unreadable = 0
        try await store.forEachCustomization(appId: appId.text) { record in
            let customization: Customization
            do {
                customization = try Customization.decodeStored(record.document)
            } catch {
                unreadable += 1
                if unreadable <= 10 {
                    logger.warning("stored_customization_unreadable", [("appId", .string(appId.text)), ("revision", .integer(record.revision)),
                                                                       ("bytes", .integer(record.document.count))])
                }
                return
            }
            try body(record, customization)
        }
        return unreadable
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
