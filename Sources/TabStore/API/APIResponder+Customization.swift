import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
extension APIResponder {
    /// A user's customization brought to the current schema, and the bytes to serve for it.
    struct CurrentCustomization {
        let value: Customization
        let document: [UInt8]
    }

    /// Whose customization a request is about: both ids checked, compared as bytes.
    struct UserKey: Hashable, Sendable {
        let appId: Identifier
        let userId: Identifier
    }

    /// Decodes a stored record (or the empty customization) under storage rules and reconciles it with `schema`.
    /// - Throws: `JSONParser.Failure` / `MalformedDocument` when the stored bytes are damaged.
    static func current(_ record: CustomizationRecord?, appId: Identifier, userId: Identifier, schema: SchemaIndex) throws -> CurrentCustomization {
        guard let record else {
            var empty = Customization.empty
            empty.schemaVersion = schema.version
            return CurrentCustomization(value: empty, document: JSONWriter.bytes(empty.json(appId: appId, userId: userId)))
        }
        var value = try Customization.decodeStored(record.document)
        if record.schemaVersion == schema.version {
            return CurrentCustomization(value: value, document: record.document)
        }
        // Written under an older schema: ids that are gone are ignored now, and pruned on the next write.
        value = Reconciler.reconcile(value, with: schema)
        return CurrentCustomization(value: value, document: JSONWriter.bytes(value.json(appId: appId, userId: userId)))
    }

    /// The ETag of a customization: its revision and the schema version it was reconciled with, which together
    /// determine its content (revisions never repeat for a user; reconciling is a function of both).
    static func customizationTag(revision: Int, schemaVersion: Int) -> EntityTag {
        EntityTag("\(revision).\(schemaVersion)")
    }

    /// The ETag of a layout: everything that shapes it (the customization's tag and the size class).
    static func layoutTag(revision: Int, schemaVersion: Int, sizeClass: SizeClass) -> EntityTag {
        EntityTag("\(revision).\(schemaVersion).\(sizeClass.rawValue)")
    }

    private static let userCacheControl = "private, no-cache"

    private func customizationResponse(_ status: Int = 200, document: [UInt8], etag: EntityTag) -> HTTPResponse {
        json(status, document, headers: Self.validatorHeaders(etag, cacheControl: Self.userCacheControl))
    }

    private func userKey(_ context: RouteContext) throws -> UserKey {
        UserKey(appId: try Self.appId(context), userId: try Self.userId(context))
    }

    // MARK: - Reads

    func getCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let key = try userKey(context)
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        return try customizationAnswer(request, key, entry: entry, record: record)!
    }

    /// `getCustomization` from memory and one point read, on the event loop; nil when something would have to
    /// wait (the app is not cached, every reader is busy) or a large stored document would need reconciling.
    func getCustomizationInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        guard let (key, entry, record) = try inlineRead(context) else { return nil }
        // Reconciling a large document would hold the event loop: the pool does that (a 304 or 412 needs no document).
        let reconcileLater = record.map { $0.schemaVersion != entry.schema?.version && $0.document.count > configuration.inlineDocumentBytes } ?? false
        return try customizationAnswer(request, key, entry: entry, record: record, reconcileLater: reconcileLater)
    }

    /// Reads without waiting, or nil when something is not in memory or no reader is idle.
    /// The route's access policy was enforced before this runs.
    private func inlineRead(_ context: RouteContext) throws -> (UserKey, AppCache.Entry, CustomizationRecord?)? {
        let key = try userKey(context)
        guard let reads = pointReads, let entry = apps.cached(key.appId) else { return nil }
        do {
            return (key, entry, try reads.customizationNow(appId: key.appId.text, userId: key.userId.text))
        } catch is ReadersBusy {
            return nil
        }
    }

    /// The customization, or 304/412 from its preconditions; nil when `reconcileLater` and a document is needed.
    private func customizationAnswer(_ request: HTTPRequest, _ key: UserKey, entry: AppCache.Entry, record: CustomizationRecord?,
                                     reconcileLater: Bool = false) throws -> HTTPResponse? {
        let schema = try requireSchema(entry)
        let etag = Self.customizationTag(revision: record?.revision ?? 0, schemaVersion: schema.version)
        if let early = try conditionalGET(request, etag: etag, exists: (record?.revision ?? 0) > 0,
                                          headers: Self.validatorHeaders(etag, cacheControl: Self.userCacheControl)) {
            return early
        }
        // The hot path: a document stored under the current schema is served as stored, not decoded and re-encoded.
        if let record, record.schemaVersion == schema.version {
            return customizationResponse(document: record.document, etag: etag)
        }
        if reconcileLater { return nil }
        let current = try Self.current(record, appId: key.appId, userId: key.userId, schema: schema)
        return customizationResponse(document: current.document, etag: etag)
    }

    func layout(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let sizeClass = try Self.sizeClass(request)
        let entry = try await requireApp(context)
        let key = try userKey(context)
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        return try layoutAnswer(request, key, entry: entry, record: record, sizeClass: sizeClass)!
    }

    /// `layout` on the event loop when everything is at hand and the document is small; nil otherwise.
    func layoutInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        let sizeClass = try Self.sizeClass(request)
        guard let (key, entry, record) = try inlineRead(context) else { return nil }
        // Decoding and laying out a large document would hold the event loop: the pool does that (not a 304 or 412).
        let layOutLater = record.map { $0.document.count > configuration.inlineDocumentBytes } ?? false
        return try layoutAnswer(request, key, entry: entry, record: record, sizeClass: sizeClass, layOutLater: layOutLater)
    }

    private static func sizeClass(_ request: HTTPRequest) throws -> SizeClass {
        guard let sizeClass = request.queryParameter("sizeClass").flatMap(SizeClass.init(rawValue:)) else {
            throw APIError.badRequest(.invalidParameter, "sizeClass must be compact or regular")
        }
        return sizeClass
    }

    /// The layout, or 304/412 from its preconditions; nil when `layOutLater` and the layout is needed.
    private func layoutAnswer(_ request: HTTPRequest, _ key: UserKey, entry: AppCache.Entry, record: CustomizationRecord?, sizeClass: SizeClass,
                              layOutLater: Bool = false) throws -> HTTPResponse? {
        let schema = try requireSchema(entry)
        let etag = Self.layoutTag(revision: record?.revision ?? 0, schemaVersion: schema.version, sizeClass: sizeClass)
        if let early = try conditionalGET(request, etag: etag, exists: (record?.revision ?? 0) > 0,
                                          headers: Self.validatorHeaders(etag, cacheControl: Self.userCacheControl)) {
            return early
        }
        if layOutLater { return nil }
        let current = try Self.current(record, appId: key.appId, userId: key.userId, schema: schema)
        let layout = Layout(customization: current.value, index: schema, sizeClass: sizeClass)
        return customizationResponse(document: JSONWriter.bytes(layout.json(appId: key.appId, userId: key.userId, customization: current.value)),
                                     etag: etag)
    }

    // MARK: - Writes

    /// How many times a write recomputes after another server's write won the compare-and-set.
    private static let writeAttempts = 8

    /// Stores the next revision computed by `next` from the latest stored record.
    ///
    /// Decoding, validation and encoding happen here, on the concurrency pool, never inside the storage
    /// writer's transaction: the writer only compares the revision this was computed from and stores the
    /// bytes (compare-and-set). Writes of one user take turns in `userLocks`, so on one server the set
    /// succeeds at once; a write from elsewhere in between (another replica) makes this recompute.
    /// `next` returns nil when nothing changes (no new revision then).
    private func write(
        _ request: HTTPRequest, _ context: RouteContext,
        next: @escaping @Sendable (CustomizationRecord?, SchemaIndex, UserKey) throws -> CustomizationRecord?
    ) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let schema = try requireSchema(entry)
        let key = try userKey(context)
        let preconditions = try Preconditions(request)
        let stored = try await userLocks.withLock(key) { () async throws -> CustomizationRecord? in
            for _ in 0..<Self.writeAttempts {
                let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
                let base = record?.revision ?? 0
                // Against what was read, named as a GET would name it now (the revision and the current schema
                // version): a tag from before a schema change no longer matches. The set below compares revisions,
                // so what was checked here is what gets replaced. A customization "exists" once it has a revision.
                let current = Self.customizationTag(revision: base, schemaVersion: schema.version)
                if preconditions.evaluate(current, exists: base > 0, safe: false) == .failed {
                    throw APIError.preconditionFailed(current: current, detail: "the customization is now \(current.text); read it again and retry")
                }
                guard let candidate = try next(record, schema, key) else { return record }
                guard candidate.document.count <= configuration.maxCustomizationBytes else {
                    throw RuleRefusal([Violation(pointer: "", code: .customizationTooLarge,
                                                 detail: "the customization would take \(candidate.document.count) bytes; at most \(configuration.maxCustomizationBytes) are stored")])
                }
                do {
                    return try await store.updateCustomization(appId: key.appId.text, userId: key.userId.text, expectedRevision: base) { _ in candidate }
                } catch StoreConflict.revisionMismatch {
                    continue  // changed meanwhile by another server: read again, check the preconditions again, compute again
                } catch StoreConflict.notFound {
                    throw APIError.notFound(.appNotFound, "no app \"\(key.appId)\"")
                }
            }
            throw APIError(status: 503, slug: .writeContention, title: "Service unavailable",
                           detail: "the customization kept changing while this write was computed; retry")
        }
        // The stored bytes are the answer; no decode and re-encode after the write.
        let etag = Self.customizationTag(revision: stored?.revision ?? 0, schemaVersion: schema.version)
        if let stored, stored.schemaVersion == schema.version {
            return customizationResponse(document: stored.document, etag: etag)
        }
        let current = try Self.current(stored, appId: key.appId, userId: key.userId, schema: schema)
        return customizationResponse(document: current.document, etag: etag)
    }

    /// The record that stores `value` as the revision after `record`'s.
    private static func nextRecord(_ value: Customization, after record: CustomizationRecord?, schema: SchemaIndex, key: UserKey) -> CustomizationRecord {
        var next = value
        next.revision = (record?.revision ?? 0) + 1
        next.schemaVersion = schema.version
        next.updatedAt = Timestamp.now()
        return CustomizationRecord(appId: key.appId.text, userId: key.userId.text, revision: next.revision, schemaVersion: schema.version,
                                   document: JSONWriter.bytes(next.json(appId: key.appId, userId: key.userId)), updatedAt: next.updatedAt!)
    }

    /// A write that edits the current choices: nil when they stay the same under the current schema.
    private func edit(
        _ request: HTTPRequest, _ context: RouteContext,
        change: @escaping @Sendable (Customization, SchemaIndex) throws -> Customization
    ) async throws -> HTTPResponse {
        try await write(request, context) { record, schema, key in
            let current = try Self.current(record, appId: key.appId, userId: key.userId, schema: schema)
            let changed = try change(current.value, schema)
            // Nothing to store when the choices stay the same and the stored form is already current (or there
            // is none: the empty customization at revision 0 is what a first no-op write leaves).
            if changed.sameChoices(as: current.value), record == nil || record?.schemaVersion == schema.version { return nil }
            return Self.nextRecord(changed, after: record, schema: schema, key: key)
        }
    }

    func putCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let (document, echo) = try Customization.decode(try jsonBody(request))
        let key = try userKey(context)
        if let appId = echo.appId, Identifier(appId) != key.appId {
            throw APIError(status: 400, slug: .malformedRequest, title: "Malformed request", detail: "appId does not match the path",
                           violations: [Violation(pointer: "/appId", code: .mismatch, detail: "appId must be \"\(key.appId)\"")])
        }
        if let userId = echo.userId, Identifier(userId) != key.userId {
            throw APIError(status: 400, slug: .malformedRequest, title: "Malformed request", detail: "userId does not match the path",
                           violations: [Violation(pointer: "/userId", code: .mismatch, detail: "userId must be \"\(key.userId)\"")])
        }
        let bodyRevision = echo.revision
        return try await edit(request, context) { current, schema in
            // A `revision` in the body works like If-Match: a stale one is refused.
            if let bodyRevision, bodyRevision != current.revision {
                let etag = Self.customizationTag(revision: current.revision, schemaVersion: schema.version)
                throw APIError.preconditionFailed(current: etag, detail: "the customization is at revision \(current.revision), not \(bodyRevision); read it again and retry")
            }
            return try CustomizationEditor.replace(with: document, index: schema)
        }
    }

    func patchCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let operations = try Operation.decodeList(try jsonBody(request))
        return try await edit(request, context) { current, schema in
            try CustomizationEditor.apply(operations, to: current, index: schema)
        }
    }

    /// Forgets the user's choices without decoding what is stored (so even a document an older version
    /// accepted, whatever its size, can always be deleted). The revision still moves forward (the empty
    /// customization is stored as the next revision), so an ETag is never reused for different content.
    func deleteCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        _ = try await write(request, context) { record, schema, key in
            guard record != nil else { return nil }
            return Self.nextRecord(.empty, after: record, schema: schema, key: key)
        }
        return HTTPResponse(status: 204)
    }
}
