import TabStoreSupport

/// An app as stored.
package struct AppRecord: Sendable, Equatable {
    package let id: String
    package let name: String
    package let signingSecret: String
    package let createdAt: String
    /// The current schema version, 0 before the first registration.
    package let schemaVersion: Int
    /// Versions up to this one were used by an earlier app with the same id: the next is above both.
    package let schemaVersionFloor: Int
    /// The oldest schema version whose clients are still served (docs/domain.md "Several app versions at once"); 1 unless the operator raised it.
    package let minimumSchemaVersion: Int
    /// The highest minimum under which a write has dropped choices only older versions had: the minimum never
    /// goes below it again.
    package let minimumApplied: Int

    package init(id: String, name: String, signingSecret: String, createdAt: String, schemaVersion: Int, schemaVersionFloor: Int,
                 minimumSchemaVersion: Int = 1, minimumApplied: Int = 1) {
        self.id = id
        self.name = name
        self.signingSecret = signingSecret
        self.createdAt = createdAt
        self.schemaVersion = schemaVersion
        self.schemaVersionFloor = schemaVersionFloor
        self.minimumSchemaVersion = minimumSchemaVersion
        self.minimumApplied = minimumApplied
    }

    /// The oldest version clients may name: the minimum, and never one an earlier app with this id registered.
    package var supportedFrom: Int { max(minimumSchemaVersion, schemaVersionFloor + 1) }

    /// The version the next registration gets.
    package var nextSchemaVersion: Int { max(schemaVersion, schemaVersionFloor) + 1 }
}

/// One immutable schema version; `document` is the schema JSON as served (with `version` and `createdAt`).
package struct SchemaVersionRecord: Sendable, Equatable {
    package let appId: String
    package let version: Int
    package let document: [UInt8]
    package let createdAt: String

    package init(appId: String, version: Int, document: [UInt8], createdAt: String) {
        self.appId = appId
        self.version = version
        self.document = document
        self.createdAt = createdAt
    }
}

/// A user's stored customization; `document` is the customization JSON exactly as GET serves it,
/// so the hot path sends stored bytes without decoding and encoding them again.
package struct CustomizationRecord: Sendable, Equatable {
    package let appId: String
    package let userId: String
    package let revision: Int
    /// The schema version of the client that wrote it; negative (minus that version) when the document also keeps
    /// choices about ids that version lacks (other supported versions', docs/domain.md "Several app versions at once"), so that no read
    /// serves its bytes as stored: use `servedAsStoredUnder` and `writtenUnder`.
    package let schemaVersion: Int
    package let document: [UInt8]
    package let updatedAt: String

    /// The version under which `document` is served as stored (the writer's, when it keeps nothing another
    /// version's clients chose); nil when every read reconciles it.
    package var servedAsStoredUnder: Int? { schemaVersion > 0 ? schemaVersion : nil }
    /// The schema version of the client that wrote it.
    package var writtenUnder: Int { schemaVersion.magnitude > Int.max ? 0 : abs(schemaVersion) }

    package init(appId: String, userId: String, revision: Int, schemaVersion: Int, document: [UInt8], updatedAt: String) {
        self.appId = appId
        self.userId = userId
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.document = document
        self.updatedAt = updatedAt
    }
}

/// One user of an app, as the operator's user list shows it: no document.
package struct StoredUser: Sendable, Equatable {
    package let userId: String
    package let revision: Int
    /// The schema version of the client that last wrote (`CustomizationRecord.writtenUnder`).
    package let schemaVersion: Int
    package let updatedAt: String

    package init(userId: String, revision: Int, schemaVersion: Int, updatedAt: String) {
        self.userId = userId
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.updatedAt = updatedAt
    }

    /// The rows of a range scan that starts at `prefix` (or after `after`), in id order, up to the first that
    /// no longer starts with `prefix`: every later row sorts above the prefix's range too.
    package static func prefixed(_ rows: [StoredUser], prefix: String) -> [StoredUser] {
        let bytes = Identifier(prefix)
        return Array(rows.prefix { Identifier($0.userId).hasBytePrefix(bytes) })
    }

    /// Where a range scan for `prefix` after `after` starts (inclusive): the greater, in bytes.
    package static func scanStart(prefix: String, after: String?) -> (start: String, inclusive: Bool) {
        guard let after, Identifier(prefix) <= Identifier(after) else { return (prefix, true) }
        return (after, false)
    }
}

/// A named operator token as stored: never the token, only its SHA-256 digest.
package struct OperatorTokenRecord: Sendable, Equatable {
    package let name: String
    package let digest: [UInt8]
    /// `admin` or `read`.
    package let scope: String
    package let createdAt: String
    /// Seconds since 1970; nil: never expires.
    package let expiresAt: Int?

    package init(name: String, digest: [UInt8], scope: String, createdAt: String, expiresAt: Int?) {
        self.name = name
        self.digest = digest
        self.scope = scope
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// Most named tokens stored at once; names are 1-64 bytes.
    package static let maxTokens = 100
    package static let maxNameBytes = 64
}

/// What `createOperatorToken` did.
package enum OperatorTokenCreation: Sendable, Equatable {
    case created
    case nameTaken
    /// `OperatorTokenRecord.maxTokens` exist already.
    case full
}

/// One audit log entry: who did what to which ids, when, under which request id, answered with which status.
package struct AuditEntry: Sendable, Equatable {
    /// Assigned by the store (ascending); 0 before it is stored.
    package let seq: Int
    package let at: String
    package let actor: String
    package let action: String
    package let appId: String?
    package let userId: String?
    package let target: String?
    package let requestId: String
    package let status: Int

    package init(seq: Int = 0, at: String, actor: String, action: String, appId: String?, userId: String?, target: String?,
                 requestId: String, status: Int) {
        self.seq = seq
        self.at = at
        self.actor = actor
        self.action = action
        self.appId = appId
        self.userId = userId
        self.target = target
        self.requestId = requestId
        self.status = status
    }
}

/// What the API layer needs from storage. The SQLite implementation is the embedded default; another
/// database can implement the same protocol without touching the API layer.
package protocol TabStoreBackend: Sendable {
    /// - Throws: `StoreConflict.alreadyExists`, `StorageError`.
    func createApp(id: String, name: String, signingSecret: String, createdAt: String) async throws -> AppRecord
    func app(_ id: String) async throws -> AppRecord?
    /// Apps ordered by id, starting after `cursor`.
    func listApps(after cursor: String?, limit: Int) async throws -> [AppRecord]
    /// Deletes the app with its schemas and customizations; false when there was none.
    func deleteApp(_ id: String) async throws -> Bool
    /// - Throws: `StoreConflict.notFound`.
    func rotateSecret(appId: String, signingSecret: String) async throws
    /// Sets the app's minimum schema version, refused below `minimumApplied` or above the current version.
    /// - Throws: `StoreConflict.notFound`, `StoreConflict.minimumApplied(current:)`, `StoreConflict.revisionMismatch`
    ///   (the minimum is above the current schema version).
    func setMinimumSchemaVersion(appId: String, minimum: Int) async throws -> AppRecord
    /// Records, before a write that drops choices only versions below `minimum` had, that the minimum was applied:
    /// from then on it never goes below `minimum`.
    /// - Returns: false when the app's minimum is below `minimum` now (lowered meanwhile): the write must not drop them.
    func noteMinimumApplied(appId: String, minimum: Int) async throws -> Bool
    /// Adds the next schema version when the current one is still `expectedCurrent`.
    /// - Throws: `StoreConflict.notFound`, `StoreConflict.revisionMismatch` (someone registered meanwhile).
    func addSchemaVersion(
        appId: String, expectedCurrent: Int, makeDocument: @escaping @Sendable (_ version: Int) -> [UInt8], createdAt: String
    ) async throws -> SchemaVersionRecord
    func schemaVersion(appId: String, version: Int) async throws -> SchemaVersionRecord?
    func customization(appId: String, userId: String) async throws -> CustomizationRecord?
    /// A read that may be served slightly stale (a GET of the customization): a backend with read replicas may
    /// answer from one, never with anything older than this process's own writes and the changes it was told
    /// of for the user, nor below `atLeast` (a revision the client named); the others read as `customization`.
    func customizationForRead(appId: String, userId: String, atLeast: Int?) async throws -> CustomizationRecord?
    /// Reads the current row inside the write transaction, lets `change` compute the new row, stores it.
    /// `change` returns nil to leave the row as it is. When `expectedRevision` is given and differs from
    /// the stored one (0 for none), nothing runs.
    /// - Throws: `StoreConflict.revisionMismatch`, `StoreConflict.notFound` (the app is gone), whatever `change` throws.
    func updateCustomization(
        appId: String, userId: String, expectedRevision: Int?,
        change: @escaping @Sendable (CustomizationRecord?) throws -> CustomizationRecord?
    ) async throws -> CustomizationRecord?
    /// Deletes a user's customization; false when there was none. (The API's DELETE stores the empty customization
    /// as a new revision instead. On the embedded store the history hangs from the row, so it goes with it.)
    /// - Throws: `StoreConflict.revisionMismatch`.
    func deleteCustomization(appId: String, userId: String, expectedRevision: Int?) async throws -> Bool
    /// Commits one write in one transaction: the next revision with its history row (older rows past the
    /// retention removed), and the idempotent answer, or only the answer when nothing changes.
    /// - Throws: `StoreConflict.revisionMismatch` (the stored revision is not `expectedRevision`),
    ///   `StoreConflict.notFound` (the app is gone), `StoreConflict.answerExists` (another write stored an answer
    ///   under the same key meanwhile; nothing was committed), `StorageError`.
    func commitCustomization(_ commit: CustomizationCommit) async throws
    /// Runs `body` holding the user's write turn across every process on the database: a write that lost a
    /// compare-and-set runs its next attempts here, so writers that lost once take turns instead of losing again.
    /// Backends that only one process writes (one writer queue) just run `body`.
    /// - Throws: what `body` throws; `StorageError` (unavailable) when the turn cannot be had within the bound.
    func withWriteTurn<T: Sendable>(appId: String, userId: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T
    /// The last revision a user had before an erase (0 for none): the next one is above it, so no revision
    /// number (and no ETag) ever names two contents.
    func revisionFloor(appId: String, userId: String) async throws -> Int
    /// The answer stored under `key` for the user, unless it was created before `notBefore` (expired).
    func idempotentAnswer(appId: String, userId: String, key: String, notBefore: Int) async throws -> IdempotentAnswer?
    /// Kept revisions below `before` (all when nil), newest first, at most `limit`; only the last `keep`
    /// count (a backend may remove older rows later than the write that made them too old). The rows stop after
    /// the first one past the first that brings the bytes of documents and operations above `maxBytes` (that row
    /// is returned: it tells the caller an older page exists), so a page never reads a hundred large rows to
    /// show twenty.
    func history(appId: String, userId: String, before: Int?, limit: Int, keep: Int, maxBytes: Int) async throws -> [HistoryRecord]
    /// One of the last `keep` revisions, nil when it is not kept.
    func historyRecord(appId: String, userId: String, revision: Int, keep: Int) async throws -> HistoryRecord?
    /// Everything stored about a user in `appId`, or in every app when nil (history: the last `keep` revisions);
    /// apps with nothing stored are left out.
    func userData(userId: String, appId: String?, keep: Int) async throws -> [UserData]
    /// The apps where something is stored about the user (customization, history or idempotent answers).
    func appsHoldingUser(userId: String) async throws -> [String]
    /// Erases a user's customization, history and idempotent answers in one app, in one transaction, keeping
    /// only the revision counter (`revisionFloor`).
    /// - Returns: whether anything was erased.
    func eraseUser(userId: String, appId: String) async throws -> Bool
    /// The number of stored history rows (all apps; at most `housekeepingEvery` per user past the retention).
    func historyCount() async throws -> Int
    /// Calls `body` with every customization of an app (stats, dry runs), from one read snapshot.
    func forEachCustomization(appId: String, _ body: (CustomizationRecord) throws -> Void) async throws
    /// The number of stored customizations (all apps).
    func customizationCount() async throws -> Int
    /// Up to `limit` users of an app with a stored customization, in byte order of their ids: those whose id
    /// starts with `prefix` (bytes) and sorts after `after`. An index range scan of the primary key.
    func users(appId: String, prefix: String, after: String?, limit: Int) async throws -> [StoredUser]
    /// Stores a named operator token (only its SHA-256 digest) unless the name is taken or `OperatorTokenRecord.maxTokens`
    /// exist, both checked in the transaction that inserts (concurrent creations never pass the bound).
    func createOperatorToken(_ token: OperatorTokenRecord) async throws -> OperatorTokenCreation
    /// Every named operator token, by name (at most `OperatorTokenRecord.maxTokens`: creation is bounded).
    func operatorTokens() async throws -> [OperatorTokenRecord]
    /// The token with this digest, read from the database (so a revocation holds on every replica at once).
    func operatorToken(digest: [UInt8]) async throws -> OperatorTokenRecord?
    /// Revokes (deletes) a named token; false when there was none.
    func revokeOperatorToken(name: String) async throws -> Bool
    /// Appends an audit entry (numbered by the store) and keeps only the newest `keep` entries.
    func appendAudit(_ entry: AuditEntry, keep: Int) async throws
    /// Up to `limit` audit entries older than `before` (all: nil), newest first, of one app and one actor when given.
    func audit(app: String?, actor: String?, before: Int?, limit: Int) async throws -> [AuditEntry]
    /// Whether the database answers.
    func ping() async -> Bool
    /// Why writes fail now (full, read-only, I/O error, corrupt), nil while they work.
    func writeFailure() async -> StorageError?
    /// The backend's cache of stored customizations, if it keeps one (`/metrics`).
    var recordCacheStatistics: CacheStatistics? { get }
    /// Gauges of the backend's own for `/metrics` (PostgreSQL: the replication settings in force), read per scrape.
    func backendGauges() async -> [BackendGauge]
    /// Writes a consistent copy of the database to `path`.
    func backup(to path: String) async throws
    /// Finishes queued writes and closes.
    func close() async
    /// Calls `handler` (on a thread of the backend's) for every change another process committed to a shared
    /// database (replicas), after its commit. Backends whose database no other process writes call it only for
    /// a write of their own that committed after its caller had been answered 503 (its bound passed).
    func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void)
}

/// A change another replica committed, as far as caches and change-feed followers care.
package enum StoreChange: Sendable, Equatable {
    /// A user's customization, history or answers changed (a write, a delete, an erase).
    case customization(appId: String, userId: String)
    /// The app record changed (created).
    case app(appId: String)
    /// The app's signing secret was replaced: tokens and followers the old one authorized are done.
    case secretRotated(appId: String)
    /// A new schema version became current.
    case schema(appId: String)
    case appDeleted(appId: String)
    /// A named operator token was revoked: its streams and long polls end.
    case operatorTokenRevoked(name: String)
    /// Changes may have been missed (the listener lost its connection): forget every cached app.
    case unknown
}

extension TabStoreBackend {
    /// Kept revisions without a byte bound.
    package func history(appId: String, userId: String, before: Int?, limit: Int, keep: Int) async throws -> [HistoryRecord] {
        try await history(appId: appId, userId: userId, before: before, limit: limit, keep: keep, maxBytes: Int.max)
    }

    /// Only this process writes the database: nothing to observe.
    package func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) {}

    package func withWriteTurn<T: Sendable>(appId: String, userId: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await body()
    }

    /// Backends that cannot tell report no write failure.
    package func writeFailure() async -> StorageError? { nil }
    package var recordCacheStatistics: CacheStatistics? { nil }
    package func backendGauges() async -> [BackendGauge] { [] }
    package func customizationForRead(appId: String, userId: String, atLeast: Int?) async throws -> CustomizationRecord? {
        try await customization(appId: appId, userId: userId)
    }
}

/// A backend whose point reads never wait (the embedded SQLite store: WAL readers beside the writer),
/// so the API may answer a GET on the event loop.
package protocol SynchronousPointReads: Sendable {
    /// The customization, or nil when there is none.
    /// - Throws: `ReadersBusy` when every reader is busy (the caller goes the waiting way instead), `StorageError`.
    func customizationNow(appId: String, userId: String) throws -> CustomizationRecord?
    /// The app record without its schema (authentication before a body is read).
    /// - Throws: `ReadersBusy`, `StorageError`.
    func appNow(_ id: String) throws -> AppRecord?
}

/// Every reader is busy: a point read would have to wait, which an event loop never does.
package struct ReadersBusy: Error, Sendable {
    package init() {}
}
