import TabStoreDomain
import TabStoreStorage
import TabStoreSupport

/// Apps and their current schema, kept in memory: every request needs the app's signing secret and
/// schema, and they change only through the operator's writes, which invalidate the entry.
final class AppCache: Sendable {
    struct Entry: Sendable {
        let app: AppRecord
        /// The current schema, nil before the first registration.
        let schema: SchemaIndex?
    }

    private struct State {
        var entries: [Identifier: Entry] = [:]
        /// Bumped by every invalidation; a load that raced with one is not stored.
        var generation = 0
    }

    private static let maxEntries = 10_000
    /// Entries and generation; readers and the operator's writes touch them under this lock.
    private let state = Locked(State())
    private let store: any TabStoreBackend

    init(store: any TabStoreBackend) { self.store = store }

    /// The app with its current schema, or nil when there is no such app.
    /// - Throws: storage errors; a stored schema that no longer parses (a bug) as `StorageError`.
    func entry(_ appId: Identifier) async throws -> Entry? {
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

    /// The entry when it is in memory (no waiting).
    func cached(_ appId: Identifier) -> Entry? { state.withLock { $0.entries[appId] } }

    func invalidate(_ appId: Identifier) {
        state.withLock { state in
            state.generation += 1
            state.entries[appId] = nil
        }
    }

    /// Forgets every app (changes made elsewhere may have been missed).
    func invalidateAll() {
        state.withLock { state in
            state.generation += 1
            state.entries.removeAll()
        }
    }

    /// A stored schema document (validated when it was registered).
    static func decodeStored(_ record: SchemaVersionRecord) throws -> TabSchema {
        var problems: [Violation] = []
        let json = try JSONParser.parse(record.document)
        return try TabSchema.decode(json, problems: &problems)
    }
}
