import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// The application's own state, shared by its use cases and by the API that drives them: storage, the caches, the
/// user's write turns, the followers and the write use case. Made once per service; every member is an immutable
/// value or a `Sendable` object that guards its own state. Nothing of HTTP in it.
package struct ApplicationServices: Sendable {
    /// What the application's caches and bounds are, from the service's configuration.
    package struct Configuration: Sendable {
        package var writes: CustomizationWrites.Limits
        /// Followers (long polls and streams) per user, and long polls in all.
        package var maxFollowersPerUser: Int
        package var maxLongPolls: Int
        package var representationCacheBytes: Int
        package var documentCacheBytes: Int
        package var historyPageCacheBytes: Int
        package var historyReads: HistoryReads.Limits
        /// Called between history reads (tests slow them down).
        package var historyReadPause: (@Sendable () async -> Void)?

        package init(writes: CustomizationWrites.Limits, maxFollowersPerUser: Int, maxLongPolls: Int, representationCacheBytes: Int,
                     documentCacheBytes: Int, historyPageCacheBytes: Int, historyReads: HistoryReads.Limits,
                     historyReadPause: (@Sendable () async -> Void)? = nil) {
            self.writes = writes
            self.maxFollowersPerUser = maxFollowersPerUser
            self.maxLongPolls = maxLongPolls
            self.representationCacheBytes = representationCacheBytes
            self.documentCacheBytes = documentCacheBytes
            self.historyPageCacheBytes = historyPageCacheBytes
            self.historyReads = historyReads
            self.historyReadPause = historyReadPause
        }
    }

    package let store: any TabStoreBackend
    package let logger: Logger
    /// Apps and their current schema; the operator's writes invalidate entries.
    package let apps: AppCache
    /// Writes of one user take turns here (see `CustomizationWrites.write`); so do erases and the
    /// publications that follow each, so followers learn of one user's revisions in commit order.
    package let userLocks: KeyedLock<UserKey>
    /// Long polls and change-feed streams, told of each commit.
    package let changes: ChangeHub
    /// Encoded representations computed from a stored customization (layouts, customizations reconciled
    /// with a newer schema), keyed by app, user and ETag. An ETag names exactly one representation of a
    /// user's resource, so an entry never goes stale: nothing invalidates it, it only ages out.
    package let representations: ByteBoundedCache<[UInt8]>
    /// Decoded stored documents, so a write starts from its user's last document without parsing it again.
    package let documents: DecodedDocuments
    /// Rendered history pages, keyed by everything a page is a function of, the user's revision at read time
    /// included (`historyPageKey`): a write, an erase or another replica's change makes a
    /// new key, so an entry never goes stale; it only ages out (or goes with its app).
    package let historyPages: ByteBoundedCache<[UInt8]>
    /// Admission of history pages and exports: one read per user at a time, a few in the store at once.
    package let historyReads: HistoryReads
    /// The write of a customization (PUT, PATCH, DELETE, revert), over the members above.
    package let writes: CustomizationWrites
    /// The read of a customization and of its layouts, over `store`, `pointReads` and `representations`.
    package let reads: CustomizationReads

    /// Subscribes to the backend's change notifications (`observeReplicas`).
    package init(store: any TabStoreBackend, configuration: Configuration, logger: Logger) {
        let apps = AppCache(store: store), userLocks = KeyedLock<UserKey>()
        let changes = ChangeHub(maxPerUser: configuration.maxFollowersPerUser, maxLongPolls: configuration.maxLongPolls)
        let documents = DecodedDocuments(budget: configuration.documentCacheBytes)
        let representations = ByteBoundedCache<[UInt8]>(budget: configuration.representationCacheBytes)
        self.representations = representations
        self.store = store
        self.logger = logger
        self.apps = apps
        self.userLocks = userLocks
        self.changes = changes
        self.documents = documents
        // Few shards: a page may be a MiB and more, and an entry may cost at most a quarter of its shard.
        self.historyPages = ByteBoundedCache(budget: configuration.historyPageCacheBytes, shards: 2)
        self.historyReads = HistoryReads(configuration.historyReads, pause: configuration.historyReadPause)
        self.reads = CustomizationReads(store: store, representations: representations)
        self.writes = CustomizationWrites(store: store, apps: apps, userLocks: userLocks, changes: changes, documents: documents,
                                          limits: configuration.writes)
        observeReplicas()
    }

    /// Calls `body` with every stored customization of an app that decodes; one that does not (damaged, or
    /// written by a future version) is skipped, counted and logged (never its content), so one bad row never
    /// fails a whole-app operation.
    /// - Returns: how many rows were skipped.
    /// - Throws: storage errors and what `body` throws.
    package func forEachReadableCustomization(_ appId: Identifier, _ body: (CustomizationRecord, Customization) throws -> Void) async throws -> Int {
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
