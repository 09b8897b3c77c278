import Foundation

/// The queue's file: `{"format": 1, "appId", "userId", "writes": [{"idempotencyKey", "enqueuedAt", "body", "schemaVersion"}],
/// "customization"?, "layouts"?: [{"key", "layout"}], "lastSynced"?}`. `schemaVersion` is absent for a write queued
/// without one (and in files of clients that predate it: read as nil, the current version, which is what those
/// clients sent). The local state (the last customization and layouts the server served, and when) sits beside
/// the writes in the same file, so one atomic rename keeps both consistent; clients that predate it ignore those
/// members, so the format stays 1.
enum QueueFile {
    struct Contents: Codable {
        var format: Int
        var appId: TabStoreID
        var userId: TabStoreID
        var writes: [Entry]
        var customization: Customization?
        var layouts: [StoredLayout]?
        /// Seconds since 1970.
        var lastSynced: Double?
    }

    struct Entry: Codable {
        var idempotencyKey: String
        /// Seconds since 1970.
        var enqueuedAt: Double
        var body: String
        /// Omitted when nil (synthesized `Codable` uses `encodeIfPresent`/`decodeIfPresent` for optionals).
        var schemaVersion: Int?
    }

    struct StoredLayout: Codable {
        var key: String
        var layout: TabLayout
    }

    /// What the file holds (empty when there is no file).
    struct State {
        var writes: [PendingWrite] = []
        var customization: Customization?
        var layouts: [String: TabLayout] = [:]
        var lastSynced: Date?
    }

    static func load(_ file: URL, appId: TabStoreID, userId: TabStoreID) throws -> State {
        guard FileManager.default.fileExists(atPath: file.path) else { return State() }
        let contents: Contents
        do {
            let data = try Data(contentsOf: file)
            // Created but never written (a crash between create and the first write; `touch`): a new queue.
            if data.isEmpty { return State() }
            contents = try TabStoreJSON.decode(Contents.self, from: data)
        } catch {
            throw OfflineQueueError.unreadable(file, "\(error)")
        }
        guard contents.format == 1 else { throw OfflineQueueError.unreadable(file, "format \(contents.format)") }
        guard contents.appId == appId, contents.userId == userId else {
            throw OfflineQueueError.belongsTo(appId: contents.appId, userId: contents.userId)
        }
        let writes = try contents.writes.map { entry in
            guard let request = try? TabStoreJSON.decode(PatchRequest.self, from: Data(entry.body.utf8)) else {
                throw OfflineQueueError.unreadable(file, "write \(entry.idempotencyKey)")
            }
            return PendingWrite(idempotencyKey: entry.idempotencyKey, operations: request.operations, schemaVersion: entry.schemaVersion,
                                enqueuedAt: Date(timeIntervalSince1970: entry.enqueuedAt), body: entry.body)
        }
        let layouts = Dictionary((contents.layouts ?? []).map { ($0.key, $0.layout) }, uniquingKeysWith: { _, last in last })
        return State(writes: writes, customization: contents.customization, layouts: layouts,
                     lastSynced: contents.lastSynced.map(Date.init(timeIntervalSince1970:)))
    }

    /// Replaces the file in one step (a temporary file renamed over it), so a kill leaves the old or the new queue.
    static func save(_ state: State, to file: URL, appId: TabStoreID, userId: TabStoreID) throws {
        let contents = Contents(format: 1, appId: appId, userId: userId, writes: state.writes.map {
            Entry(idempotencyKey: $0.idempotencyKey, enqueuedAt: $0.enqueuedAt.timeIntervalSince1970, body: $0.body, schemaVersion: $0.schemaVersion)
            }, customization: state.customization,
            layouts: state.layouts.isEmpty ? nil : state.layouts.keys.sorted().map { StoredLayout(key: $0, layout: state.layouts[$0]!) },
           lastSynced: state.lastSynced?.timeIntervalSince1970)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try TabStoreJSON.encode(contents).write(to: file, options: .atomic)
    }
}
