import TabStoreStore
import TabStoreSupport

/// Tab schema versions: immutable once stored, numbered past the app's floor so a number is never reused.
extension PostgresStore {
    package func addSchemaVersion(
        appId: String, expectedCurrent: Int, makeDocument: @escaping @Sendable (Int) -> [UInt8], createdAt: String
    ) async throws -> SchemaVersionRecord {
        try await transaction { db in
            let app = try db.query("SELECT schema_version, schema_version_floor FROM apps WHERE id = $1 FOR UPDATE", [.text(appId)])
            guard app.count == 1 else { throw StoreConflict.notFound }
            let (current, floor) = (app.int(0, 0), app.int(0, 1))
            guard current == expectedCurrent else { throw StoreConflict.revisionMismatch(current: current) }
            let version = max(current, floor) &+ 1
            let document = makeDocument(version)
            try db.query("INSERT INTO schema_versions (app_id, version, document, created_at) VALUES ($1, $2, $3, $4)",
                         [.text(appId), .integer(version), .bytes(document), .text(createdAt)])
            try db.query("UPDATE apps SET schema_version = $1 WHERE id = $2", [.integer(version), .text(appId)])
            try self.notify(db, .schema(appId: appId))
            return SchemaVersionRecord(appId: appId, version: version, document: document, createdAt: createdAt)
        }
    }

    package func schemaVersion(appId: String, version: Int) async throws -> SchemaVersionRecord? {
        let rows = try await pool.run { db in
            try db.query("SELECT document, created_at FROM schema_versions WHERE app_id = $1 AND version = $2", [.text(appId), .integer(version)])
        }
        return rows.count > 0 ? SchemaVersionRecord(appId: appId, version: version, document: rows.bytes(0, 0), createdAt: rows.text(0, 1)) : nil
    }
}
