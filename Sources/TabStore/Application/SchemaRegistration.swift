import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// What registering a schema version did.
package enum SchemaRegistrationOutcome: Sendable {
    /// The schema is the current one (or another registration just stored this very schema): its stored document.
    case current(document: [UInt8])
    /// A new version was stored.
    case registered(SchemaVersionRecord)
}

/// What registering a schema would do, without storing anything (a dry run).
package struct SchemaImpact: Sendable {
    package var identical: Bool
    package var currentVersion: Int?
    /// The version a registration would create; nil when the schema is the current one.
    package var wouldCreateVersion: Int?
    package var addedIds: [Identifier]
    package var removedIds: [Identifier]
    /// Every id some customization would lose, sorted.
    package var droppedIds: [Identifier]
    package var customizationsChecked: Int
    package var customizationsAffected: Int
    package var customizationsUnreadable: Int
    package var dynamicTabsDropped: Int
}

/// Why a registration was refused (beside the storage's errors).
package enum SchemaRegistrationError: Error, Sendable, Equatable {
    /// Another schema version was registered meanwhile.
    case concurrentRegistration
    case appNotFound(Identifier)
}

/// Registering an app's tab schema, and its dry run.
extension ApplicationServices {
    /// Stores `schema` as the next version of `entry`'s app, unless it is the current one; then tells the app's
    /// followed users their customization reconciled with it.
    /// - Throws: `SchemaRegistrationError`, storage errors.
    package func registerSchema(_ schema: TabSchema, entry: AppCache.Entry) async throws -> SchemaRegistrationOutcome {
        let appId = Identifier(entry.app.id)
        let current = entry.schema
        if let current, current.schema.isIdentical(to: schema) {
            return .current(
                document: current.schema.storedDocument(version: current.version, createdAt: try await schemaCreatedAt(appId.text, current.version)))
        }
        let record: SchemaVersionRecord
        do {
            let createdAt = Timestamp.now()
            record = try await store.addSchemaVersion(appId: appId.text, expectedCurrent: current?.version ?? 0, makeDocument: { version in
                schema.storedDocument(version: version, createdAt: createdAt)
            }, createdAt: createdAt)
        } catch StoreConflict.revisionMismatch {
            apps.invalidate(appId)
            // Another registration won: when it registered this very schema (the same PUT sent twice at once),
            // this one is answered as a repeat is, with that version; another schema is a conflict.
            if let now = try await apps.entry(appId)?.schema, now.schema.isIdentical(to: schema) {
                return .current(
                    document: now.schema.storedDocument(version: now.version, createdAt: try await schemaCreatedAt(appId.text, now.version)))
            }
            throw SchemaRegistrationError.concurrentRegistration
        } catch StoreConflict.notFound {
            throw SchemaRegistrationError.appNotFound(appId)
        }
        apps.invalidate(appId)
        republish(appId: appId)
        return .registered(record)
    }

    private func schemaCreatedAt(_ appId: String, _ version: Int) async throws -> String {
        try await store.schemaVersion(appId: appId, version: version)?.createdAt ?? ""
    }

    /// What registering `schema` would do, without storing anything.
    /// - Throws: storage errors.
    package func schemaImpact(_ schema: TabSchema, entry: AppCache.Entry) async throws -> SchemaImpact {
        let appId = Identifier(entry.app.id)
        let current = entry.schema
        let identical = current?.schema.isIdentical(to: schema) ?? false
        let nextVersion = entry.app.nextSchemaVersion
        let newIndex = SchemaIndex(schema: schema, version: nextVersion)
        var impact = Reconciler.Impact()
        var unreadable = 0
        if !identical {
            // What is served now (under the current version) against what would be served under the new one: choices
            // the stored document keeps for other versions are not this registration's doing.
            unreadable = try await forEachReadableCustomization(appId) { record, customization in
                let served = current.map { record.servedAsStoredUnder == $0.version ? customization : Reconciler.reconcile(customization, with: $0) }
                impact.add(served ?? customization, newIndex: newIndex)
            }
        }
        let oldIds = Set(current?.allTabs.map(\.tab.id) ?? []).union(current?.schema.items.map(\.id) ?? [])
        let newIds = Set(newIndex.allTabs.map(\.tab.id)).union(schema.items.map(\.id))
        return SchemaImpact(identical: identical, currentVersion: current?.version, wouldCreateVersion: identical ? nil : nextVersion,
                            addedIds: newIds.subtracting(oldIds).sorted(), removedIds: oldIds.subtracting(newIds).sorted(),
                            droppedIds: impact.droppedIds.sorted(), customizationsChecked: impact.customizationsChecked,
                            customizationsAffected: impact.customizationsAffected, customizationsUnreadable: unreadable,
                            dynamicTabsDropped: impact.dynamicTabsDropped)
    }
}
