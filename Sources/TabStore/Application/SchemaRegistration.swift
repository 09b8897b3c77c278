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
    /// One page of the affected users, in byte order of their ids, each with what changes for them.
    package var affectedUsers: [(userId: Identifier, impact: UserImpact)]
    /// The last listed user when more follow (the next page's `after`).
    package var affectedUsersNext: Identifier?
}

/// Which affected users a dry run lists: the first `limit` whose id sorts after `after`.
package struct ImpactPage: Sendable {
    package var after: Identifier?
    package var limit: Int

    package init(after: Identifier? = nil, limit: Int = 50) {
        self.after = after
        self.limit = limit
    }
}

/// The first `limit` (+1, to tell whether more follow) affected users above `after` in byte order, kept in
/// bounded memory while all the rows stream by.
struct AffectedUsersPage {
    let page: ImpactPage
    private(set) var users: [(userId: Identifier, impact: UserImpact)] = []

    init(_ page: ImpactPage) { self.page = page }

    mutating func offer(_ userId: Identifier, _ impact: UserImpact) {
        if let after = page.after, !(after < userId) { return }
        users.append((userId, impact))
        if users.count > 4 * (page.limit + 1) { trim() }
    }

    mutating func trim() {
        users.sort { $0.userId < $1.userId }
        if users.count > page.limit + 1 { users.removeLast(users.count - page.limit - 1) }
    }

    /// The listed users and the next page's cursor.
    mutating func finish() -> ([(userId: Identifier, impact: UserImpact)], Identifier?) {
        trim()
        let listed = Array(users.prefix(page.limit))
        return (listed, users.count > page.limit ? listed.last?.userId : nil)
    }
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
    package func schemaImpact(_ schema: TabSchema, entry: AppCache.Entry, page: ImpactPage = ImpactPage()) async throws -> SchemaImpact {
        let appId = Identifier(entry.app.id)
        let current = entry.schema
        let identical = current?.schema.isIdentical(to: schema) ?? false
        let nextVersion = entry.app.nextSchemaVersion
        let newIndex = SchemaIndex(schema: schema, version: nextVersion)
        var impact = Reconciler.Impact()
        var unreadable = 0
        var affected = AffectedUsersPage(page)
        if !identical {
            // What is served now (under the current version) against what would be served under the new one: choices
            // the stored document keeps for other versions are not this registration's doing.
            unreadable = try await forEachReadableCustomization(appId) { record, customization in
                let served = current.map { record.servedAsStoredUnder == $0.version ? customization : Reconciler.reconcile(customization, with: $0) }
                let user = impact.add(served ?? customization, newIndex: newIndex)
                if !user.isEmpty { affected.offer(Identifier(record.userId), user) }
            }
        }
        let (users, next) = affected.finish()
        let oldIds = Set(current?.allTabs.map(\.tab.id) ?? []).union(current?.schema.items.map(\.id) ?? [])
        let newIds = Set(newIndex.allTabs.map(\.tab.id)).union(schema.items.map(\.id))
        return SchemaImpact(identical: identical, currentVersion: current?.version, wouldCreateVersion: identical ? nil : nextVersion,
                            addedIds: newIds.subtracting(oldIds).sorted(), removedIds: oldIds.subtracting(newIds).sorted(),
                            droppedIds: impact.droppedIds.sorted(), customizationsChecked: impact.customizationsChecked,
                            customizationsAffected: impact.customizationsAffected, customizationsUnreadable: unreadable,
                            dynamicTabsDropped: impact.dynamicTabsDropped, affectedUsers: users, affectedUsersNext: next)
    }
}
