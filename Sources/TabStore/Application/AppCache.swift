import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// Apps and their current schema, kept in memory: every request needs the app's signing secret and
/// schema, and they change only through the operator's writes, which invalidate the entry.
package final class AppCache: Sendable {
    package struct Entry: Sendable {
        package let app: AppRecord
        /// The current schema, nil before the first registration.
        package let schema: SchemaIndex?
        /// What this entry learned lazily: the supported versions' union, whether the minimum was recorded applied.
        package let parts = LazyParts()

        /// Whether clients of more than one version are served (the minimum is below the current version).
        package var servesSeveralVersions: Bool { (schema?.version ?? 0) > app.supportedFrom }
    }

    /// Parts of an entry computed when first needed, once per entry (an invalidation makes a new entry).
    package final class LazyParts: Sendable {
        private struct State {
            var supported: SupportedVersions?
            /// Every supported version's index when there are few (`AppCache.maxCheckedVersions`), else empty.
            var indexes: [SchemaIndex]?
            /// The one load of `supported` in progress: concurrent writers wait for it instead of each loading.
            var loading: Task<SupportedVersions, any Error>?
            var minimumNoted = false
        }

        private let state = Locked(State())

        package var supported: SupportedVersions? { state.withLock { $0.supported } }
        package var indexes: [SchemaIndex]? {
            get { state.withLock { $0.indexes } }
            set { state.withLock { $0.indexes = newValue } }
        }

        /// `supported`, loaded by `load` once (concurrent callers share the one load; a failed load is tried again).
        package func supported(_ load: @escaping @Sendable () async throws -> SupportedVersions) async throws -> SupportedVersions {
            let task = state.withLock { state -> Task<SupportedVersions, any Error>? in
                if state.supported != nil { return nil }
                if let loading = state.loading { return loading }
                let task = Task { try await load() }
                state.loading = task
                return task
            }
            guard let task else { return state.withLock { $0.supported! } }
            do {
                let loaded = try await task.value
                state.withLock { state in
                    state.supported = loaded
                    state.loading = nil
                }
                return loaded
            } catch {
                state.withLock { $0.loading = nil }
                throw error
            }
        }
        package var minimumNoted: Bool {
            get { state.withLock { $0.minimumNoted } }
            set { state.withLock { $0.minimumNoted = newValue } }
        }
    }

    /// Past schema versions by app and version, kept across invalidations: a version never changes, and a version
    /// number is never reused for an app id (a re-created app's versions start above the old ones).
    private struct VersionKey: Hashable {
        let appId: Identifier
        let version: Int
    }

    private static let maxVersions = 512
    private let versions = Locked([VersionKey: SchemaIndex]())
    /// Each version's ids alone (`SupportedVersions` of one version), kept across invalidations like `versions`: a new
    /// registration or minimum rebuilds an app's union from these, without reading and parsing every version again.
    private static let maxVersionIds = 4096
    private let versionIds = Locked([VersionKey: SupportedVersions]())

    private struct State {
        var entries: [Identifier: Entry] = [:]
        /// Bumped by every invalidation; a load that raced with one is not stored.
        var generation = 0
    }

    private static let maxEntries = 10_000
    /// Entries and generation; readers and the operator's writes touch them under this lock.
    private let state = Locked(State())
    private let store: any TabStoreBackend

    package init(store: any TabStoreBackend) { self.store = store }

    /// The app with its current schema, or nil when there is no such app.
    /// - Throws: storage errors; a stored schema that no longer parses (a bug) as `StorageError`.
    package func entry(_ appId: Identifier) async throws -> Entry? {
        let (cached, generation) = state.withLock { ($0.entries[appId], $0.generation) }
        if let cached { return cached }
        guard let app = try await store.app(appId.text) else { return nil }
        var schema: SchemaIndex?
        if app.schemaVersion > 0, let record = try await store.schemaVersion(appId: appId.text, version: app.schemaVersion) {
            schema = SchemaIndex(schema: try Self.decodeStored(record), version: record.version)
        }
        let entry = Entry(app: app, schema: schema)
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= Self.maxEntries { state.entries.removeAll(keepingCapacity: true) }
            state.entries[appId] = entry
        }
        return entry
    }

    /// Schema version `version` of the entry's app (the current one from the entry), nil when the app never had it.
    /// - Throws: storage errors.
    package func index(_ entry: Entry, version: Int) async throws -> SchemaIndex? {
        if let schema = entry.schema, schema.version == version { return schema }
        if let cached = cachedIndex(entry, version: version) { return cached }
        guard version > entry.app.schemaVersionFloor, version <= entry.app.schemaVersion,
              let index = try await read(entry, version: version) else { return nil }
        versions.withLock { versions in
            if versions.count >= Self.maxVersions { versions.removeAll(keepingCapacity: true) }
            versions[VersionKey(appId: Identifier(entry.app.id), version: version)] = index
        }
        return index
    }

    /// A schema version read from storage and indexed (not kept).
    private func read(_ entry: Entry, version: Int) async throws -> SchemaIndex? {
        guard let record = try await store.schemaVersion(appId: entry.app.id, version: version) else { return nil }
        return SchemaIndex(schema: try Self.decodeStored(record), version: record.version)
    }

    /// A supported version that storage lacks (a bug).
    private static func missing(_ version: Int, _ entry: Entry) -> StorageError {
        StorageError(failure: "schema version \(version) of app \(entry.app.id) is missing")
    }

    /// `index(_:version:)` when it is in memory (no waiting).
    package func cachedIndex(_ entry: Entry, version: Int) -> SchemaIndex? {
        if let schema = entry.schema, schema.version == version { return schema }
        return versions.withLock { $0[VersionKey(appId: Identifier(entry.app.id), version: version)] }
    }

    /// The versions the entry's app supports (its minimum through its current one), built once per entry.
    /// - Throws: storage errors; `StorageError` when a supported version is missing (a bug).
    /// Versions not in memory are read and indexed for this only (not kept: an app may have hundreds), one at a time,
    /// letting other work run between them; concurrent writers of the app share one load.
    package func supported(_ entry: Entry) async throws -> SupportedVersions {
        if let known = entry.parts.supported { return known }
        guard let current = entry.schema else { return SupportedVersions([]) }
        guard entry.servesSeveralVersions else {
            return try await entry.parts.supported { SupportedVersions([current]) }
        }
        return try await entry.parts.supported { [self] in
            var supported = SupportedVersions([current])
            let appId = Identifier(entry.app.id)
            for version in entry.app.supportedFrom..<current.version {
                let key = VersionKey(appId: appId, version: version)
                if let ids = versionIds.withLock({ $0[key] }) {
                    supported.formUnion(ids)
                    continue
                }
                let index: SchemaIndex
                if let cached = cachedIndex(entry, version: version) {
                    index = cached
                } else {
                    guard let read = try await read(entry, version: version) else { throw Self.missing(version, entry) }
                    index = read
                    await Task.yield()
                }
                let ids = SupportedVersions([index])
                versionIds.withLock { versionIds in
                    if versionIds.count >= Self.maxVersionIds { versionIds.removeAll(keepingCapacity: true) }
                    versionIds[key] = ids
                }
                supported.formUnion(ids)
            }
            return supported
        }
    }

    /// Most supported versions whose views a write checks one by one (the no-visible-tab rule for every version).
    package static let maxCheckedVersions = 16

    /// Every supported version's index, oldest first, while there are at most `maxCheckedVersions`; empty past that.
    package func supportedIndexes(_ entry: Entry) async throws -> [SchemaIndex] {
        if let known = entry.parts.indexes { return known }
        guard let current = entry.schema else { return [] }
        var indexes: [SchemaIndex] = []
        if current.version - entry.app.supportedFrom < Self.maxCheckedVersions {
            for version in entry.app.supportedFrom..<current.version {
                guard let index = try await index(entry, version: version) else { throw Self.missing(version, entry) }
                indexes.append(index)
            }
            indexes.append(current)
        }
        entry.parts.indexes = indexes
        return indexes
    }

    /// The entry when it is in memory (no waiting).
    package func cached(_ appId: Identifier) -> Entry? { state.withLock { $0.entries[appId] } }

    package func invalidate(_ appId: Identifier) {
        state.withLock { state in
            state.generation += 1
            state.entries[appId] = nil
        }
    }

    /// Forgets every app (changes made elsewhere may have been missed).
    package func invalidateAll() {
        state.withLock { state in
            state.generation += 1
            state.entries.removeAll()
        }
    }

    /// A stored schema document (validated when it was registered).
    package static func decodeStored(_ record: SchemaVersionRecord) throws -> TabSchema {
        var problems: [Violation] = []
        let json = try JSONParser.parse(record.document)
        return try TabSchema.decode(json, problems: &problems)
    }
}
