extension TabStoreAPI {
    /// A user's customization brought to the current schema, and the bytes to serve for it.
    struct CurrentCustomization {
        let value: Customization
        let document: [UInt8]
        /// The stored document was served as-is (its schema version is current), so its ETag also names its content.
        let isStoredForm: Bool
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
            return CurrentCustomization(value: empty, document: JSONWriter.bytes(empty.json(appId: appId, userId: userId)), isStoredForm: true)
        }
        var value = try Customization.decodeStored(record.document)
        if record.schemaVersion == schema.version {
            return CurrentCustomization(value: value, document: record.document, isStoredForm: true)
        }
        // Written under an older schema: ids that are gone are ignored now, and pruned on the next write.
        value = Reconciler.reconcile(value, with: schema)
        return CurrentCustomization(value: value, document: JSONWriter.bytes(value.json(appId: appId, userId: userId)), isStoredForm: false)
    }

    private func etag(_ revision: Int) -> String { "\"\(revision)\"" }

    /// Whether `If-None-Match` names this revision (or `*`).
    private func notModified(_ request: HTTPRequest, revision: Int) -> Bool {
        let tags = request.headers.values("If-None-Match").flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS() }
        return tags.contains { $0 == "*" || $0 == etag(revision) || $0 == "W/" + etag(revision) }
    }

    /// The revision `If-Match` requires, if any.
    /// - Throws: 400 for a value that is not one of our ETags.
    private func expectedRevision(_ request: HTTPRequest) throws -> Int? {
        guard let value = request.headers["If-Match"]?.trimmingOWS() else { return nil }
        if value == "*" { return nil }
        let digits = value.utf8.dropFirst().dropLast()
        guard value.utf8.count >= 3, value.utf8.count <= 20, value.hasPrefix("\""), value.hasSuffix("\""),
              digits.allSatisfy({ (0x30...0x39).contains($0) }), let revision = Int(String(decoding: digits, as: UTF8.self))
        else {
            throw APIError.badRequest("invalid-if-match", "If-Match must be an ETag this API issued, like \"3\"")
        }
        return revision
    }

    private func customizationResponse(_ status: Int = 200, document: [UInt8], revision: Int) -> HTTPResponse {
        json(status, document, headers: HTTPHeaders([("ETag", etag(revision)), ("Cache-Control", "private, no-cache")]))
    }

    private func notModifiedResponse(_ revision: Int) -> HTTPResponse {
        HTTPResponse(status: 304, headers: HTTPHeaders([("ETag", etag(revision)), ("Cache-Control", "private, no-cache")]))
    }

    private func userKey(_ context: RouteContext) throws -> UserKey {
        UserKey(appId: try Self.appId(context), userId: try Self.userId(context))
    }

    // MARK: - Reads

    func getCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let key = try userKey(context)
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        return try customizationAnswer(request, key, entry: entry, record: record)
    }

    /// `getCustomization` from memory and one point read, on the event loop; nil when something would have to
    /// wait (the app is not cached, every reader is busy) or a large stored document would need reconciling.
    func getCustomizationInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        guard let (key, entry, record) = try inlineRead(context) else { return nil }
        if let record, record.schemaVersion != entry.schema?.version, record.document.count > configuration.inlineDocumentBytes { return nil }
        return try customizationAnswer(request, key, entry: entry, record: record)
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

    private func customizationAnswer(_ request: HTTPRequest, _ key: UserKey, entry: AppCache.Entry, record: CustomizationRecord?) throws -> HTTPResponse {
        let schema = try requireSchema(entry)
        // The hot path: a document stored under the current schema is served as stored, not decoded and re-encoded.
        if let record, record.schemaVersion == schema.version {
            if notModified(request, revision: record.revision) { return notModifiedResponse(record.revision) }
            return customizationResponse(document: record.document, revision: record.revision)
        }
        let current = try Self.current(record, appId: key.appId, userId: key.userId, schema: schema)
        if current.isStoredForm, notModified(request, revision: current.value.revision) { return notModifiedResponse(current.value.revision) }
        return customizationResponse(document: current.document, revision: current.value.revision)
    }

    func layout(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let sizeClass = try Self.sizeClass(request)
        let entry = try await requireApp(context)
        let key = try userKey(context)
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        return try layoutAnswer(request, key, entry: entry, record: record, sizeClass: sizeClass)
    }

    /// `layout` on the event loop when everything is at hand and the document is small; nil otherwise.
    func layoutInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        let sizeClass = try Self.sizeClass(request)
        guard let (key, entry, record) = try inlineRead(context) else { return nil }
        // Decoding and laying out a large document would hold the event loop: the pool does that.
        if let record, record.document.count > configuration.inlineDocumentBytes { return nil }
        return try layoutAnswer(request, key, entry: entry, record: record, sizeClass: sizeClass)
    }

    private static func sizeClass(_ request: HTTPRequest) throws -> SizeClass {
        guard let sizeClass = request.queryParameter("sizeClass").flatMap(SizeClass.init(rawValue:)) else {
            throw APIError.badRequest("invalid-parameter", "sizeClass must be compact or regular")
        }
        return sizeClass
    }

    private func layoutAnswer(_ request: HTTPRequest, _ key: UserKey, entry: AppCache.Entry, record: CustomizationRecord?, sizeClass: SizeClass) throws -> HTTPResponse {
        let schema = try requireSchema(entry)
        let current = try Self.current(record, appId: key.appId, userId: key.userId, schema: schema)
        if current.isStoredForm, notModified(request, revision: current.value.revision) { return notModifiedResponse(current.value.revision) }
        let layout = Layout(customization: current.value, index: schema, sizeClass: sizeClass)
        return customizationResponse(document: JSONWriter.bytes(layout.json(appId: key.appId, userId: key.userId, customization: current.value)),
                                     revision: current.value.revision)
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
        let expected = try expectedRevision(request)
        let stored = try await userLocks.withLock(key) { () async throws -> CustomizationRecord? in
            for _ in 0..<Self.writeAttempts {
                let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
                let base = record?.revision ?? 0
                if let expected, expected != base { throw StoreConflict.revisionMismatch(current: base) }
                guard let candidate = try next(record, schema, key) else { return record }
                guard candidate.document.count <= configuration.maxCustomizationBytes else {
                    throw RuleRefusal([Violation(pointer: "", code: "customization-too-large",
                                                 detail: "the customization would take \(candidate.document.count) bytes; at most \(configuration.maxCustomizationBytes) are stored")])
                }
                do {
                    return try await store.updateCustomization(appId: key.appId.text, userId: key.userId.text, expectedRevision: base) { _ in candidate }
                } catch StoreConflict.revisionMismatch where expected == nil {
                    continue  // changed meanwhile by another server: compute again from the new revision
                } catch StoreConflict.notFound {
                    throw APIError.notFound("app-not-found", "no app \"\(key.appId)\"")
                }
            }
            throw APIError(status: 503, slug: "write-contention", title: "Service unavailable",
                           detail: "the customization kept changing while this write was computed; retry")
        }
        // The stored bytes are the answer; no decode and re-encode after the write.
        if let stored, stored.schemaVersion == schema.version {
            return customizationResponse(document: stored.document, revision: stored.revision)
        }
        let current = try Self.current(stored, appId: key.appId, userId: key.userId, schema: schema)
        return customizationResponse(document: current.document, revision: current.value.revision)
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
            if changed.sameChoices(as: current.value), record?.schemaVersion == schema.version { return nil }
            return Self.nextRecord(changed, after: record, schema: schema, key: key)
        }
    }

    func putCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let (document, echo) = try Customization.decode(try jsonBody(request))
        let key = try userKey(context)
        if let appId = echo.appId, Identifier(appId) != key.appId {
            throw APIError(status: 400, slug: "malformed-request", title: "Malformed request", detail: "appId does not match the path",
                           violations: [Violation(pointer: "/appId", code: "mismatch", detail: "appId must be \"\(key.appId)\"")])
        }
        if let userId = echo.userId, Identifier(userId) != key.userId {
            throw APIError(status: 400, slug: "malformed-request", title: "Malformed request", detail: "userId does not match the path",
                           violations: [Violation(pointer: "/userId", code: "mismatch", detail: "userId must be \"\(key.userId)\"")])
        }
        let bodyRevision = echo.revision
        return try await edit(request, context) { current, schema in
            // A `revision` in the body works like If-Match: a stale one is refused.
            if let bodyRevision, bodyRevision != current.revision { throw StoreConflict.revisionMismatch(current: current.revision) }
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
