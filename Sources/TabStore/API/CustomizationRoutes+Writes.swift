import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
/// Writes: PUT replaces the choices, PATCH applies operations, DELETE forgets them.
extension CustomizationRoutes {
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
        let entry = try await services.requireApp(context)
        let schema = try entry.requireSchema()
        let key = try userKey(context)
        let preconditions = try Preconditions(request)
        let stored = try await userLocks.withLock(key) { () async throws -> CustomizationRecord? in
            for _ in 0..<Self.writeAttempts {
                let record = try await services.store.customization(appId: key.appId.text, userId: key.userId.text)
                let base = record?.revision ?? 0
                // Against what was read, named as a GET would name it now (the revision and the current schema
                // version): a tag from before a schema change no longer matches. The set below compares revisions,
                // so what was checked here is what gets replaced. A customization "exists" once it has a revision.
                let current = Self.customizationTag(revision: base, schemaVersion: schema.version)
                if preconditions.evaluate(current, exists: base > 0, safe: false) == .failed {
                    throw APIError.preconditionFailed(current: current, detail: "the customization is now \(current.text); read it again and retry")
                }
                guard let candidate = try next(record, schema, key) else { return record }
                guard candidate.document.count <= services.configuration.maxCustomizationBytes else {
                    throw RuleRefusal([Violation(pointer: "", code: .customizationTooLarge,
                                                 detail: "the customization would take \(candidate.document.count) bytes; at most \(services.configuration.maxCustomizationBytes) are stored")])
                }
                do {
                    return try await services.store.updateCustomization(appId: key.appId.text, userId: key.userId.text, expectedRevision: base) { _ in candidate }
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
        let (document, echo) = try Customization.decode(try request.jsonBody())
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
        let operations = try Operation.decodeList(try request.jsonBody())
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
