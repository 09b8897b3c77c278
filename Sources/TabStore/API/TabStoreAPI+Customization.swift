extension TabStoreAPI {
    /// A user's customization brought to the current schema, and the bytes to serve for it.
    struct CurrentCustomization {
        let value: Customization
        let document: [UInt8]
        /// The stored document was served as-is (its schema version is current), so its ETag also names its content.
        let isStoredForm: Bool
    }

    private func userId(_ context: RouteContext) throws -> String {
        let userId = context.parameter("userId")
        guard Identifiers.isValidUserId(userId) else {
            throw APIError.badRequest("invalid-user-id", "a user id is 1-256 printable characters")
        }
        return userId
    }

    /// Decodes a stored record (or the empty customization) and reconciles it with `schema`.
    static func current(_ record: CustomizationRecord?, appId: String, userId: String, schema: SchemaIndex) throws -> CurrentCustomization {
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
        guard value.count >= 3, value.hasPrefix("\""), value.hasSuffix("\""), let revision = Int(value.dropFirst().dropLast()), revision >= 0 else {
            throw APIError.badRequest("invalid-if-match", "If-Match must be an ETag this API issued, like \"3\"")
        }
        return revision
    }

    private func customizationResponse(_ status: Int = 200, document: [UInt8], revision: Int) -> HTTPResponse {
        json(status, document, headers: HTTPHeaders([("ETag", etag(revision)), ("Cache-Control", "private, no-cache")]))
    }

    func getCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await requireUser(request, context)
        let entry = try await requireApp(context)
        let record = try await store.customization(appId: entry.app.id, userId: try userId(context))
        return try customizationAnswer(request, context, entry: entry, record: record)
    }

    /// `getCustomization` from memory and one point read, on the event loop; nil when the app is not cached.
    func getCustomizationInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        guard let (entry, record) = try inlineRead(request, context) else { return nil }
        return try customizationAnswer(request, context, entry: entry, record: record)
    }

    /// Authenticates and reads without waiting, or nil when something is not in memory yet.
    private func inlineRead(_ request: HTTPRequest, _ context: RouteContext) throws -> (AppCache.Entry, CustomizationRecord?)? {
        guard let reads = pointReads, let principal = try authenticateInline(request) else { return nil }
        try authorizeUser(principal, context)
        guard let entry = apps.cached(context.parameter("appId")) else { return nil }
        return (entry, try reads.customizationNow(appId: entry.app.id, userId: try userId(context)))
    }

    private func notModifiedResponse(_ revision: Int) -> HTTPResponse {
        HTTPResponse(status: 304, headers: HTTPHeaders([("ETag", etag(revision)), ("Cache-Control", "private, no-cache")]))
    }

    private func customizationAnswer(_ request: HTTPRequest, _ context: RouteContext, entry: AppCache.Entry, record: CustomizationRecord?) throws -> HTTPResponse {
        let schema = try requireSchema(entry)
        // The hot path: a document stored under the current schema is served as stored, not decoded and re-encoded.
        if let record, record.schemaVersion == schema.version {
            if notModified(request, revision: record.revision) { return notModifiedResponse(record.revision) }
            return customizationResponse(document: record.document, revision: record.revision)
        }
        let current = try Self.current(record, appId: entry.app.id, userId: try userId(context), schema: schema)
        if current.isStoredForm, notModified(request, revision: current.value.revision) { return notModifiedResponse(current.value.revision) }
        return customizationResponse(document: current.document, revision: current.value.revision)
    }

    /// Runs `change` on the latest stored value inside the writer's transaction and stores the result
    /// as the next revision; a change that changes nothing stores nothing and keeps the revision.
    /// The caller has authorized the request (before reading its body, so strangers learn nothing from it).
    private func write(
        _ request: HTTPRequest, _ context: RouteContext,
        change: @escaping @Sendable (Customization, SchemaIndex) throws -> Customization
    ) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let schema = try requireSchema(entry)
        let userId = try userId(context)
        let appId = entry.app.id
        let expected = try expectedRevision(request)
        let stored: CustomizationRecord?
        do {
            stored = try await store.updateCustomization(appId: appId, userId: userId, expectedRevision: expected) { record in
                let current = try Self.current(record, appId: appId, userId: userId, schema: schema)
                var next = try change(current.value, schema)
                if next.sameChoices(as: current.value), record?.schemaVersion == schema.version { return nil }
                next.revision = current.value.revision + 1
                next.schemaVersion = schema.version
                next.updatedAt = Timestamp.now()
                return CustomizationRecord(appId: appId, userId: userId, revision: next.revision, schemaVersion: schema.version,
                                           document: JSONWriter.bytes(next.json(appId: appId, userId: userId)), updatedAt: next.updatedAt!)
            }
        } catch StoreConflict.notFound {
            throw APIError.notFound("app-not-found", "no app \"\(appId)\"")
        }
        // The stored bytes are the answer; no decode and re-encode after the write.
        if let stored, stored.schemaVersion == schema.version {
            return customizationResponse(document: stored.document, revision: stored.revision)
        }
        let current = try Self.current(stored, appId: appId, userId: userId, schema: schema)
        return customizationResponse(document: current.document, revision: current.value.revision)
    }

    func putCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await requireUser(request, context)
        let (document, echo) = try Customization.decode(try jsonBody(request))
        if let appId = echo.appId, appId != context.parameter("appId") {
            throw APIError(status: 400, slug: "malformed-request", title: "Malformed request", detail: "appId does not match the path",
                           violations: [Violation(pointer: "/appId", code: "mismatch", detail: "appId must be \"\(context.parameter("appId"))\"")])
        }
        if let userId = echo.userId, userId != context.parameter("userId") {
            throw APIError(status: 400, slug: "malformed-request", title: "Malformed request", detail: "userId does not match the path",
                           violations: [Violation(pointer: "/userId", code: "mismatch", detail: "userId must be \"\(context.parameter("userId"))\"")])
        }
        let bodyRevision = echo.revision
        return try await write(request, context) { current, schema in
            // A `revision` in the body works like If-Match: a stale one is refused.
            if let bodyRevision, bodyRevision != current.revision { throw StoreConflict.revisionMismatch(current: current.revision) }
            return try CustomizationEditor.replace(with: document, index: schema)
        }
    }

    func patchCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await requireUser(request, context)
        let operations = try Operation.decodeList(try jsonBody(request))
        return try await write(request, context) { current, schema in
            try CustomizationEditor.apply(operations, to: current, index: schema)
        }
    }

    /// Forgets the user's choices. The revision still moves forward (the empty customization is stored
    /// as the next revision), so an ETag is never reused for different content.
    func deleteCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await requireUser(request, context)
        _ = try await write(request, context) { current, schema in
            var empty = Customization.empty
            empty.revision = current.revision
            return empty
        }
        return HTTPResponse(status: 204)
    }

    func layout(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await requireUser(request, context)
        let sizeClass = try Self.sizeClass(request)
        let entry = try await requireApp(context)
        let record = try await store.customization(appId: entry.app.id, userId: try userId(context))
        return try layoutAnswer(request, context, entry: entry, record: record, sizeClass: sizeClass)
    }

    /// `layout` from memory and one point read, on the event loop; nil when the app is not cached.
    func layoutInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        guard let (entry, record) = try inlineRead(request, context) else { return nil }
        return try layoutAnswer(request, context, entry: entry, record: record, sizeClass: try Self.sizeClass(request))
    }

    private static func sizeClass(_ request: HTTPRequest) throws -> SizeClass {
        guard let sizeClass = request.queryParameter("sizeClass").flatMap(SizeClass.init(rawValue:)) else {
            throw APIError.badRequest("invalid-parameter", "sizeClass must be compact or regular")
        }
        return sizeClass
    }

    private func layoutAnswer(_ request: HTTPRequest, _ context: RouteContext, entry: AppCache.Entry, record: CustomizationRecord?, sizeClass: SizeClass) throws -> HTTPResponse {
        let schema = try requireSchema(entry)
        let userId = try userId(context)
        let current = try Self.current(record, appId: entry.app.id, userId: userId, schema: schema)
        if current.isStoredForm, notModified(request, revision: current.value.revision) { return notModifiedResponse(current.value.revision) }
        let layout = Layout(customization: current.value, index: schema, sizeClass: sizeClass)
        return customizationResponse(document: JSONWriter.bytes(layout.json(appId: entry.app.id, userId: userId, customization: current.value)),
                                     revision: current.value.revision)
    }
}
