import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// The read of a user's customization and of the layout resolved from it, as a use case over the storage
/// contract: the stored record (from the store, or without waiting from a point read), then the bytes served
/// for it under a schema version. A document stored under that version is served as stored; anything derived
/// (reconciled with a newer version, a layout) is made once per representation and kept. No HTTP here: the API
/// checks the preconditions against the tags below and answers the bytes.
package struct CustomizationReads: Sendable {
    package let store: any TabStoreBackend
    /// Point reads answered without waiting, when the backend offers them: cast once, not per request.
    package let pointReads: (any SynchronousPointReads)?
    /// Encoded representations keyed by app, user and tag. A tag names exactly one representation of a user's
    /// resource, so an entry never goes stale: nothing invalidates it, it only ages out.
    package let representations: ByteBoundedCache<[UInt8]>

    package init(store: any TabStoreBackend, representations: ByteBoundedCache<[UInt8]>) {
        self.store = store
        self.pointReads = store as? any SynchronousPointReads
        self.representations = representations
    }

    /// What a read without waiting found: the user's record (nil: nothing stored).
    package struct Immediate: Sendable {
        package let record: CustomizationRecord?
    }

    /// The user's stored record; nil when nothing is stored.
    package func record(_ key: UserKey) async throws -> CustomizationRecord? {
        try await store.customization(appId: key.appId.text, userId: key.userId.text)
    }

    /// The user's stored record for a read that may be answered by a standby (`TabStoreBackend.customizationForRead`):
    /// never older than `atLeast`, the revision the client names, nor than what this replica wrote or was told of.
    package func record(_ key: UserKey, atLeast revision: Int?) async throws -> CustomizationRecord? {
        try await store.customizationForRead(appId: key.appId.text, userId: key.userId.text, atLeast: revision)
    }

    /// The user's stored record without waiting; nil when the backend has no point reads or every reader is busy.
    package func recordNow(_ key: UserKey) throws -> Immediate? {
        guard let pointReads else { return nil }
        do {
            return Immediate(record: try pointReads.customizationNow(appId: key.appId.text, userId: key.userId.text))
        } catch is ReadersBusy {
            return nil
        }
    }

    /// The tag of a user's layout: everything that shapes it (the customization's tag, the size class, and the
    /// platform and style when the client named them: `3.2.regular`, `3.2.compact.iOS`,
    /// `3.2.regular.iPadOS.tabBarOnly`). The values of the three parameters are distinct words, so no two
    /// requests that differ share a tag.
    package static func layoutTag(revision: Int, schemaVersion: Int, request: LayoutRequest) -> String {
        var tag = "\(revision).\(schemaVersion).\(request.sizeClass.rawValue)"
        if let platform = request.platform { tag += "." + platform.rawValue }
        if let style = request.style { tag += "." + style.rawValue }
        return tag
    }

    /// The customization served for `record` under `schema`: as stored when stored under it, else reconciled
    /// (made once per tag, then kept).
    /// - Parameter reconcileLater: answer nil instead of reconciling what is not at hand (the caller is an
    ///   event loop and the document is large).
    /// - Throws: `JSONParser.Failure` / `MalformedDocument` when the stored bytes are damaged.
    package func customizationDocument(_ record: CustomizationRecord?, _ key: UserKey, schema: SchemaIndex,
                                       reconcileLater: Bool = false) throws -> [UInt8]? {
        // The hot path: a document stored under this version (and only its choices) is served as stored, not
        // decoded and encoded again.
        if let record, record.servedAsStoredUnder == schema.version { return record.document }
        let tag = CustomizationTag.opaque(revision: record?.revision ?? 0, schemaVersion: schema.version)
        let cacheKey = Self.representationKey("customization", key, tag)
        if let cached = representations.value(cacheKey) { return cached }
        if reconcileLater { return nil }
        let current = try CurrentCustomization.of(record, appId: key.appId, userId: key.userId, schema: schema)
        keep(cacheKey, current.document)
        return current.document
    }

    /// The layout resolved from `record` under `schema` for `request` (made once per tag, then kept).
    /// - Parameter layOutLater: answer nil instead of laying out what is not at hand.
    /// - Throws: `JSONParser.Failure` / `MalformedDocument` when the stored bytes are damaged.
    package func layoutDocument(_ record: CustomizationRecord?, _ key: UserKey, schema: SchemaIndex, request: LayoutRequest,
                                layOutLater: Bool = false) throws -> [UInt8]? {
        let tag = Self.layoutTag(revision: record?.revision ?? 0, schemaVersion: schema.version, request: request)
        let cacheKey = Self.representationKey("layout", key, tag)
        if let cached = representations.value(cacheKey) { return cached }
        if layOutLater { return nil }
        let current = try CurrentCustomization.of(record, appId: key.appId, userId: key.userId, schema: schema)
        let layout = Layout(customization: current.value, index: schema, request: request)
        let document = JSONWriter.bytes(layout.json(appId: key.appId, userId: key.userId, customization: current.value))
        keep(cacheKey, document)
        return document
    }

    /// `representations`' key: the resource ("layout", "customization"), its app and user, and its tag.
    static func representationKey(_ resource: String, _ key: UserKey, _ tag: String) -> ByteKey {
        ByteKey(key.appId.text, key.userId.text, resource, tag)
    }

    /// Keeps a representation's bytes, costed as the bytes plus the key and the entry's bookkeeping.
    private func keep(_ cacheKey: ByteKey, _ bytes: [UInt8]) {
        representations.put(cacheKey, bytes, cost: bytes.count + cacheKey.bytes.count + 96)
    }
}
