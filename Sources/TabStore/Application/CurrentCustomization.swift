import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// A user's customization brought to a schema version, and the bytes to serve for it.
package struct CurrentCustomization: Sendable {
    package let value: Customization
    package let document: [UInt8]

    package init(value: Customization, document: [UInt8]) {
        self.value = value
        self.document = document
    }

    /// Decodes a stored record (or the empty customization) under storage rules and reconciles it with `schema`.
    /// - Parameter documents: where a decoded document may already be (the write path); nil decodes.
    /// - Throws: `JSONParser.Failure` / `MalformedDocument` when the stored bytes are damaged.
    package static func of(_ record: CustomizationRecord?, appId: Identifier, userId: Identifier, schema: SchemaIndex,
                           documents: DecodedDocuments? = nil) throws -> CurrentCustomization {
        guard let record else {
            var empty = Customization.empty
            empty.schemaVersion = schema.version
            return CurrentCustomization(value: empty, document: JSONWriter.bytes(empty.json(appId: appId, userId: userId)))
        }
        var value = try documents?.decodeStored(record.document, of: UserKey(appId: appId, userId: userId))
            ?? Customization.decodeStored(record.document)
        if record.servedAsStoredUnder == schema.version {
            return CurrentCustomization(value: value, document: record.document)
        }
        // Written under another version (or keeping other versions' choices): reconciled under this one, which
        // names only its own ids; what it lacks stays stored for the versions that have it (docs/domain.md "Several app versions at once").
        value = Reconciler.reconcile(value, with: schema)
        return CurrentCustomization(value: value, document: JSONWriter.bytes(value.json(appId: appId, userId: userId)))
    }
}

/// What names a customization's content: its revision and the schema version it was reconciled with, which together
/// determine it (revisions never repeat for a user; reconciling is a function of both). The API serves it as a
/// strong ETag (`CustomizationRoutes.customizationTag`), the change feed as an event's id.
package enum CustomizationTag {
    package static func opaque(revision: Int, schemaVersion: Int) -> String { "\(revision).\(schemaVersion)" }
}
