import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
/// Writes: PUT replaces the choices, PATCH applies operations, DELETE forgets them (revert, in
/// `CustomizationRoutes+History`, goes through the same `write`).
extension CustomizationRoutes {
    /// How many times a write recomputes after another server's write won the compare-and-set.
    private static let writeAttempts = 8

    /// Where a write starts from.
    struct WriteBase: Sendable {
        /// The stored record; nil when the user has none.
        let record: CustomizationRecord?
        /// The revision the write stores: above the stored one, and above every revision an erase removed.
        let nextRevision: Int
    }

    /// What a write records and answers.
    struct WriteKind: Sendable {
        let change: ChangeKind
        /// A PATCH's operations as a JSON array, for the history.
        var operations: [UInt8]?
        /// PUT, PATCH and revert answer with the whole customization; DELETE with 204.
        var answersWithDocument = true
    }

    /// Stores the next revision computed by `next` from the latest stored record, with its history row and,
    /// for a request with an `Idempotency-Key`, its answer, in one transaction; then tells the user's
    /// followers. A repeat of a request whose answer is stored gets that answer again.
    ///
    /// Decoding, validation and encoding happen here, on the concurrency pool, never inside the storage
    /// writer's transaction: the writer only compares the revision this was computed from and stores the
    /// bytes (compare-and-set). Writes of one user take turns in `userLocks`, so on one server the set
    /// succeeds at once, and a repeat waits for the first to commit and then finds its answer; a write from
    /// elsewhere in between (another replica) makes this recompute.
    /// `next` returns nil when nothing changes (no new revision then).
    func write(
        _ request: HTTPRequest, _ context: RouteContext, kind: WriteKind,
        next: @escaping @Sendable (WriteBase, SchemaIndex, UserKey) throws -> CustomizationRecord?
    ) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let schema = try entry.requireSchema()
        let key = try userKey(context)
        let preconditions = try Preconditions(request)
        let idempotent = try IdempotentRequest(request)
        return try await services.userLocks.withLock(key) { () async throws -> HTTPResponse in
            // A stored answer is looked up only when this key may have one: the first attempt goes straight to the
            // commit, which stores the answer with the change or finds the key taken (`answerExists`, then the
            // next attempt replays); a request refused on the way (412, 409, a rule) looks before refusing. So a
            // new key costs no read, and a repeat still gets the first answer whatever happened since.
            for attempt in 0..<Self.writeAttempts {
                if attempt > 0, let idempotent, let replay = try await replay(idempotent, key) { return replay }
                do {
                    if let response = try await attemptWrite(kind, key: key, schema: schema, preconditions: preconditions, idempotent: idempotent, next: next) {
                        return response
                    }
                } catch {
                    if let idempotent, let replay = try await replay(idempotent, key) { return replay }
                    throw error
                }
            }
            // Only when other servers keep winning the compare-and-set (one server serializes its own writes per
            // user): nothing was applied; retry soon, as every other 503 here says.
            var contention = APIError(status: 503, slug: .writeContention, title: "Service unavailable",
                                      detail: "the customization kept changing while this write was computed; retry")
            contention.headers.add("Retry-After", "1")
            throw contention
        }
    }

    /// One attempt of `write`: reads the stored record, checks the preconditions, computes and commits.
    /// - Returns: the answer, or nil when another write won the compare-and-set or the key already has an answer.
    private func attemptWrite(
        _ kind: WriteKind, key: UserKey, schema: SchemaIndex, preconditions: Preconditions, idempotent: IdempotentRequest?,
        next: @escaping @Sendable (WriteBase, SchemaIndex, UserKey) throws -> CustomizationRecord?
    ) async throws -> HTTPResponse? {
        let store = services.store
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        let base = record?.revision ?? 0
        let floor = record == nil ? try await store.revisionFloor(appId: key.appId.text, userId: key.userId.text) : 0
        // Against what was read, named as a GET would name it now (the revision and the current schema
        // version): a tag from before a schema change no longer matches. The set below compares revisions,
        // so what was checked here is what gets replaced. A customization "exists" once it has a revision.
        let current = Self.customizationTag(revision: base, schemaVersion: schema.version)
        if preconditions.evaluate(current, exists: base > 0, safe: false) == .failed {
            throw APIError.preconditionFailed(current: current, detail: "the customization is now \(current.text); read it again and retry")
        }
        let candidate = try next(WriteBase(record: record, nextRevision: max(base, floor) + 1), schema, key)
        if let candidate, candidate.document.count > services.configuration.maxCustomizationBytes {
            throw RuleRefusal([Violation(pointer: "", code: .customizationTooLarge,
                                         detail: "the customization would take \(candidate.document.count) bytes; at most \(services.configuration.maxCustomizationBytes) are stored")])
        }
        let response = try answer(kind, stored: candidate ?? record, schema: schema, key: key)
        let now = services.configuration.clock()
        let stored = idempotent?.answer(response, at: now)
        guard candidate != nil || stored != nil else { return response }
        do {
            try await store.commitCustomization(CustomizationCommit(
                appId: key.appId.text, userId: key.userId.text, expectedRevision: base, record: candidate, change: kind.change,
                operations: kind.operations, historyRevisions: services.configuration.historyRevisions, answer: stored,
                answersExpireBefore: now - services.configuration.idempotencySeconds,
                maxAnswersPerUser: services.configuration.maxIdempotentAnswersPerUser))
        } catch StoreConflict.revisionMismatch, StoreConflict.answerExists {
            return nil  // changed meanwhile by another server, or the key has its answer: read again, check, compute again
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(key.appId)\"")
        }
        if let candidate {
            services.changes.publish(key, CustomizationState(revision: candidate.revision, schemaVersion: candidate.schemaVersion,
                                                             document: candidate.document))
        }
        return response
    }

    /// The stored first answer of a repeated request (nil for a new key).
    /// - Throws: `APIError` 422 when the key was used for another request.
    func replay(_ idempotent: IdempotentRequest, _ key: UserKey) async throws -> HTTPResponse? {
        let notBefore = services.configuration.clock() - services.configuration.idempotencySeconds
        guard let stored = try await services.store.idempotentAnswer(appId: key.appId.text, userId: key.userId.text, key: idempotent.key,
                                                                     notBefore: notBefore)
        else { return nil }
        let response = try idempotent.replay(stored)
        services.metrics.recordReplay()
        return response
    }

    /// The answer to a write that leaves `stored` current: its bytes as stored when written under the current
    /// schema (no decode and re-encode after the write), else reconciled.
    private func answer(_ kind: WriteKind, stored: CustomizationRecord?, schema: SchemaIndex, key: UserKey) throws -> HTTPResponse {
        guard kind.answersWithDocument else { return HTTPResponse(status: 204) }
        let etag = Self.customizationTag(revision: stored?.revision ?? 0, schemaVersion: schema.version)
        if let stored, stored.schemaVersion == schema.version {
            return customizationResponse(document: stored.document, etag: etag)
        }
        let current = try Self.current(stored, appId: key.appId, userId: key.userId, schema: schema)
        return customizationResponse(document: current.document, etag: etag)
    }

    /// The record that stores `value` as the revision `base` names, and the value it stores.
    private static func nextRecord(_ value: Customization, _ base: WriteBase, schema: SchemaIndex, key: UserKey) -> (CustomizationRecord, Customization) {
        var next = value
        next.revision = base.nextRevision
        next.schemaVersion = schema.version
        next.updatedAt = Timestamp.now()
        let record = CustomizationRecord(appId: key.appId.text, userId: key.userId.text, revision: next.revision, schemaVersion: schema.version,
                                         document: JSONWriter.bytes(next.json(appId: key.appId, userId: key.userId)), updatedAt: next.updatedAt!)
        return (record, next)
    }

    /// A write that edits the current choices: nil when they stay the same under the current schema.
    func edit(
        _ request: HTTPRequest, _ context: RouteContext, kind: WriteKind,
        change: @escaping @Sendable (Customization, SchemaIndex) throws -> Customization
    ) async throws -> HTTPResponse {
        let documents = services.documents
        return try await write(request, context, kind: kind) { base, schema, key in
            let current = try Self.current(base.record, appId: key.appId, userId: key.userId, schema: schema, documents: documents)
            let changed = try change(current.value, schema)
            // Nothing to store when the choices stay the same and the stored form is already current (or there
            // is none: the empty customization at revision 0 is what a first no-op write leaves).
            if changed.sameChoices(as: current.value), base.record == nil || base.record?.schemaVersion == schema.version { return nil }
            let (record, value) = Self.nextRecord(changed, base, schema: schema, key: key)
            // The next write of this user starts from these bytes: it finds them decoded (kept whether or not this
            // one commits, since an entry answers only for its exact bytes).
            documents.encoded(record.document, from: value, of: key)
            return record
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
        let (bodyRevision, bodySchemaVersion, bodyUpdatedAt) = (echo.revision, echo.schemaVersion, document.updatedAt)
        return try await edit(request, context, kind: WriteKind(change: .put)) { current, schema in
            // The server-owned fields describe the state the client read: any that differs from what is stored
            // now is refused as a stale If-Match is. `revision`, then `schemaVersion` (the choices were read
            // under another schema), then `updatedAt` (compared as bytes).
            func stale(_ detail: String) -> APIError {
                .preconditionFailed(current: Self.customizationTag(revision: current.revision, schemaVersion: schema.version), detail: detail)
            }
            if let bodyRevision, bodyRevision != current.revision {
                throw stale("the customization is at revision \(current.revision), not \(bodyRevision); read it again and retry")
            }
            if let bodySchemaVersion, bodySchemaVersion != schema.version {
                throw stale("the customization is served under schema version \(schema.version), not \(bodySchemaVersion); read it again and retry")
            }
            if let bodyUpdatedAt, Identifier(bodyUpdatedAt) != current.updatedAt.map({ Identifier($0) }) {
                throw stale("updatedAt is not the stored one; read the customization again and retry")
            }
            return try CustomizationEditor.replace(with: document, index: schema)
        }
    }

    func patchCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let body = try request.jsonBody()
        let operations = try Operation.decodeList(body)
        var kind = WriteKind(change: .patch)
        // The history keeps the body as sent (an object whose `operations` member is the list: `historyItem` shows
        // that member), unless it is larger than a stored customization may be; with no history kept (retention
        // 0) nothing needs it. Stored as received, not re-encoded: a write pays nothing for it but the bytes. A
        // body over the limit only by its whitespace is kept as the list re-encoded compactly.
        let maxBytes = services.configuration.maxCustomizationBytes
        if services.configuration.historyRevisions > 0 {
            if request.body.count <= maxBytes {
                kind.operations = request.body
            } else if case .object(let object) = body, let list = object["operations"] {
                let encoded = JSONWriter.bytes(list)
                if encoded.count <= maxBytes { kind.operations = encoded }
            }
        }
        return try await edit(request, context, kind: kind) { current, schema in
            try CustomizationEditor.apply(operations, to: current, index: schema)
        }
    }

    /// Forgets the user's choices. The revision moves forward (the empty customization is stored as the next
    /// revision), so an ETag is never reused for different content. A customization that is already forgotten
    /// under the current schema stays as it is (no new revision, history row or event), as a PUT of the same
    /// choices does. What is stored is decoded only when it is small enough to be the empty customization:
    /// any other document, even one an older version accepted whatever its size, or one that no longer
    /// decodes, is replaced without being read.
    func deleteCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await write(request, context, kind: WriteKind(change: .delete, answersWithDocument: false)) { base, schema, key in
            guard let record = base.record else { return nil }
            if record.schemaVersion == schema.version, record.document.count <= Self.maxEmptyDocumentBytes,
               let stored = try? Customization.decodeStored(record.document), stored.sameChoices(as: .empty)
            {
                return nil
            }
            return Self.nextRecord(.empty, base, schema: schema, key: key).0
        }
    }

    /// An upper bound on the stored form of the empty customization (its two ids, each escaped at most to twice
    /// its size, with its revision, time and room to spare): a larger document says something, and is not
    /// decoded to find out.
    static let maxEmptyDocumentBytes = 4 * Identifier.maxBytes + 512
}
