import TabStoreStore
import TabStoreSupport

/// Schema versions: each app's registered versions, numbered above the app's current one and its floor (the
/// highest version ever registered, so a number never names two schemas).
extension SQLiteStore {
    package func addSchemaVersion(
        appId: String, expectedCurrent: Int, makeDocument: @escaping @Sendable (Int) -> [UInt8], createdAt: String
    ) async throws -> SchemaVersionRecord {
        try await writer.write { db in
            let statement = try db.statement("SELECT schema_version, schema_version_floor FROM apps WHERE id = ?").bind([.text(appId)])
            guard try statement.step() else {
                statement.reset()
                throw StoreConflict.notFound
            }
            let (current, floor) = (statement.int(0), statement.int(1))
            statement.reset()
            guard current == expectedCurrent else { throw StoreConflict.revisionMismatch(current: current) }
            let version = max(current, floor) + 1
            let document = makeDocument(version)
            try db.run("INSERT INTO schema_versions (app_id, version, document, created_at) VALUES (?, ?, ?, ?)",
                       [.text(appId), .integer(version), .blob(document), .text(createdAt)])
            try db.run("UPDATE apps SET schema_version = ? WHERE id = ?", [.integer(version), .text(appId)])
            return SchemaVersionRecord(appId: appId, version: version, document: document, createdAt: createdAt)
        }
    }

    package func schemaVersion(appId: String, version: Int) async throws -> SchemaVersionRecord? {
        try await readers.read { db in
            let statement = try db.statement("SELECT document, created_at FROM schema_versions WHERE app_id = ? AND version = ?")
                .bind([.text(appId), .integer(version)])
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return SchemaVersionRecord(appId: appId, version: version, document: statement.bytes(0), createdAt: statement.text(1))
        }
    }
}
