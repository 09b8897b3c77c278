import Foundation
import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// Export and erase of everything stored about a user, in one app or across every app, as use cases. Exports
/// read and render like history pages: in one of `historyReads`' slots, encoded on a thread of their own.
extension ApplicationServices {
    /// `{"appId", "userId", "customization", "history", "idempotencyKeys"}` for the user in `entry`'s app.
    /// - Throws: storage errors.
    package func export(_ userId: Identifier, in entry: AppCache.Entry) async throws -> [UInt8] {
        try await historyReads.withSlot { () async throws -> [UInt8] in
            let data = try await store.userData(userId: userId.text, appId: entry.app.id, keep: writes.limits.historyRevisions).first
            return await historyReads.render { JSONWriter.bytes(self.exported(entry, userId, data)) }
        }
    }

    /// `{"userId", "apps": [each app's export]}` for every app holding something of the user.
    /// - Throws: storage errors.
    package func exportEverywhere(_ userId: Identifier) async throws -> [UInt8] {
        try await historyReads.withSlot { () async throws -> [UInt8] in
            var found: [(AppCache.Entry, UserData)] = []
            for data in try await store.userData(userId: userId.text, appId: nil, keep: writes.limits.historyRevisions) {
                // An app deleted since the read has nothing left to export.
                guard let entry = try await apps.entry(Identifier(data.appId)) else { continue }
                found.append((entry, data))
            }
            let apps = found
            return await historyReads.render {
                JSONWriter.bytes(.object(JSONObject([("userId", .string(userId.text)),
                                                     ("apps", .array(apps.map { self.exported($0.0, userId, $0.1) }))])))
            }
        }
    }

    /// Erases the user in every app holding something of theirs: one app at a time, each in its own transaction
    /// and the user's write turn there (`erase`), so what is stored when the call starts is gone when it returns
    /// (a write that lands in between is erased or comes after).
    /// - Throws: storage errors.
    package func eraseEverywhere(_ userId: Identifier) async throws {
        for appId in try await store.appsHoldingUser(userId: userId.text) {
            let entry = try await apps.entry(Identifier(appId))
            _ = try await erase(UserKey(appId: Identifier(appId), userId: userId), schema: entry?.schema)
        }
    }

    /// One app's export: the customization as a GET serves it (revision 0 for none), every kept revision newest
    /// first, and the idempotency keys kept (the answers themselves are copies of revisions).
    private func exported(_ entry: AppCache.Entry, _ userId: Identifier, _ data: UserData?) -> JSONValue {
        let appId = Identifier(entry.app.id)
        // An answer past the idempotency window no longer counts (a repeat is a new request); the writer removes
        // it in bounded steps, so it may still be stored: it is not listed.
        let notBefore = writes.limits.clock() - writes.limits.idempotencySeconds
        let keys: [JSONValue] = (data?.answers ?? []).filter { $0.createdAt >= notBefore }.map { answer in
            .object(JSONObject([("key", .string(answer.key)), ("status", .integer(answer.status)),
                                ("createdAt", .string(Timestamp.format(Date(timeIntervalSince1970: Double(answer.createdAt)))))]))
        }
        return .object(JSONObject([
            ("appId", .string(appId.text)), ("userId", .string(userId.text)),
            ("customization", exportedCustomization(data?.customization, appId: appId, userId: userId, schema: entry.schema)),
            ("history", .array((data?.history ?? []).map { historyItem($0, userId: userId) })),
            ("idempotencyKeys", .array(keys)),
        ]))
    }

    /// The customization as stored (every supported version's choices, docs/domain.md "Several app versions at
    /// once", not one version's view); none as a GET serves it (null without a schema); a damaged one as null (logged).
    private func exportedCustomization(_ record: CustomizationRecord?, appId: Identifier, userId: Identifier, schema: SchemaIndex?) -> JSONValue {
        do {
            if let record { return try JSONParser.parse(record.document) }
            guard let schema else { return .null }
            return try JSONParser.parse(try CurrentCustomization.of(nil, appId: appId, userId: userId, schema: schema).document)
        } catch {
            logger.warning("stored_customization_unreadable", [("appId", .string(appId.text)), ("revision", .integer(record?.revision ?? 0))])
            return .null
        }
    }
}
