import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// Writes: PUT replaces the choices, PATCH applies operations, DELETE forgets them (revert, in
/// `CustomizationRoutes+History`, goes through the same `write`).
extension CustomizationRoutes {
    /// How many times a write recomputes after another server's write won the compare-and-set.
    private static let writeAttempts = 64

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

    /// The schema versions a write works with (docs/domain.md "Several app versions at once").
    struct WriteVersions: Sendable {
        /// The writer's version: the request is validated and answered under it.
        let served: SchemaIndex
        /// The versions whose choices the stored document keeps; nil until a write needs them (it keeps something
        /// the writer's version cannot see), read once per cached app then.
        let supported: SupportedVersions?
        /// Whether the app serves more than its current version.
        let several: Bool
        /// Every supported version's index (empty past `AppCache.maxCheckedVersions`); nil until a write needs them.
        var indexes: [SchemaIndex]?

        /// `indexes`, or the signal to read them and compute again.
        func requireIndexes() throws -> [SchemaIndex] {
            guard let indexes else { throw SupportedVersionsNeeded() }
            return indexes
        }

        /// `supported`, or the signal to read them and compute again.
        func requireSupported() throws -> SupportedVersions {
            guard let supported else { throw SupportedVersionsNeeded() }
            return supported
        }
    }

    /// A write needs the app's supported versions, which were not read yet.
    struct SupportedVersionsNeeded: Error {}

    /// A computed next revision.
    struct Candidate: Sendable {
        let record: CustomizationRecord
        /// Whether computing it dropped choices no supported version can name (some only a retired version had).
        var dropped = false
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
        next: @escaping @Sendable (WriteBase, WriteVersions, UserKey) throws -> Candidate?
    ) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let served = try await services.servedSchema(request, entry)
        let versions = WriteVersions(served: served, supported: entry.parts.supported, several: entry.servesSeveralVersions,
                                     indexes: entry.parts.indexes)
        let key = try userKey(context)
        let preconditions = try Preconditions(request)
        let idempotent = try IdempotentRequest(request)
        return try await services.userLocks.withLock(key) { () async throws -> HTTPResponse in
            // A stored answer is looked up only when this key may have one: the first attempt goes straight to the
            // commit, which stores the answer with the change or finds the key taken (`answerExists`, then the
            // next attempt replays); a request refused on the way (412, 409, a rule) looks before refusing. So a
            // new key costs no read, and a repeat still gets the first answer whatever happened since.
            @Sendable func attempt(_ number: Int) async throws -> HTTPResponse? {
                if number > 0, let idempotent, let replay = try await replay(idempotent, key) { return replay }
                do {
                    return try await attemptWrite(kind, key: key, entry: entry, versions: versions, preconditions: preconditions,
                                                  idempotent: idempotent, next: next)
                } catch {
                    if let idempotent, let replay = try await replay(idempotent, key) { return replay }
                    throw error
                }
            }
            if let response = try await attempt(0) { return response }
            // Another server's write won the compare-and-set: the next attempts take the user's write turn across
            // servers (the database's), where only a first attempt elsewhere can still win, once per write. The
            // bound is the database's (a turn not had in time is 503 database-unavailable), not a count of losses.
            return try await services.store.withWriteTurn(appId: key.appId.text, userId: key.userId.text) { () async throws -> HTTPResponse in
                for number in 1..<Self.writeAttempts {
                    if let response = try await attempt(number) { return response }
                }
                throw Self.writeContention("the customization kept changing while this write was computed; retry")
            }
        }
    }

    /// One attempt of `write`: reads the stored record, checks the preconditions, computes and commits.
    /// - Returns: the answer, or nil when another write won the compare-and-set or the key already has an answer.
    private func attemptWrite(
        _ kind: WriteKind, key: UserKey, entry: AppCache.Entry, versions: WriteVersions, preconditions: Preconditions, idempotent: IdempotentRequest?,
        next: @escaping @Sendable (WriteBase, WriteVersions, UserKey) throws -> Candidate?
    ) async throws -> HTTPResponse? {
        let store = services.store
        let schema = versions.served
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        let base = record?.revision ?? 0
        let floor = record == nil ? try await store.revisionFloor(appId: key.appId.text, userId: key.userId.text) : 0
        // Against what was read, named as a GET under the writer's version would name it now (the revision and
        // that version): a tag from another version, or from before a schema change, does not match. The set below
        // compares revisions, so what was checked here is what gets replaced. A customization "exists" once it has
        // a revision.
        let current = Self.customizationTag(revision: base, schemaVersion: schema.version)
        if preconditions.evaluate(current, exists: base > 0, safe: false) == .failed {
            throw APIError.preconditionFailed(current: current, detail: "the customization is now \(current.text); read it again and retry")
        }
        let writeBase = WriteBase(record: record, nextRevision: max(base, floor) + 1)
        let candidate: Candidate?
        do {
            candidate = try next(writeBase, versions, key)
        } catch is SupportedVersionsNeeded {
            // The stored document keeps what the writer's version cannot see: read which versions are supported
            // (once per cached app, shared by concurrent writers) and compute again.
            let loaded = WriteVersions(served: versions.served, supported: try await services.supportedVersions(entry), several: versions.several,
                                       indexes: try await services.apps.supportedIndexes(entry))
            candidate = try next(writeBase, loaded, key)
        }
        if let candidate, candidate.record.document.count > services.configuration.maxCustomizationBytes {
            throw RuleRefusal([Violation(pointer: "", code: .customizationTooLarge,
                                         detail: "the customization would take \(candidate.record.document.count) bytes; at most \(services.configuration.maxCustomizationBytes) are stored")])
        }
        let document = try answerDocument(kind, stored: candidate?.record ?? record, schema: schema, key: key)
        let etag = Self.customizationTag(revision: (candidate?.record ?? record)?.revision ?? 0, schemaVersion: schema.version)
        let response = document.map { customizationResponse(document: $0, etag: etag) } ?? HTTPResponse(status: 204)
        let now = services.configuration.clock()
        let stored = idempotent?.answer(response, at: now)
        guard candidate != nil || stored != nil else { return response }
        // Choices only versions below the minimum had are about to go: from now on the minimum never goes below
        // it (checked in the database, so a minimum lowered meanwhile on another replica stops this write).
        if let candidate, candidate.dropped, entry.app.minimumSchemaVersion > entry.app.schemaVersionFloor + 1, !entry.parts.minimumNoted {
            guard try await store.noteMinimumApplied(appId: key.appId.text, minimum: entry.app.minimumSchemaVersion) else {
                services.apps.invalidate(key.appId)
                throw Self.writeContention("the app's minimum schema version changed while this write was computed; retry")
            }
            // The cached record's `minimumApplied` is now behind the database's; only the minimum's route reads it,
            // and it reads the database. The entry (and the supported versions it holds) stays.
            entry.parts.minimumNoted = true
        }
        do {
            try await store.commitCustomization(CustomizationCommit(
                appId: key.appId.text, userId: key.userId.text, expectedRevision: base, record: candidate?.record, change: kind.change,
                operations: kind.operations, historyRevisions: services.configuration.historyRevisions, answer: stored,
                answersExpireBefore: now - services.configuration.idempotencySeconds,
                maxAnswersPerUser: services.configuration.maxIdempotentAnswersPerUser))
        } catch StoreConflict.revisionMismatch, StoreConflict.answerExists {
            return nil  // changed meanwhile by another server, or the key has its answer: read again, check, compute again
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(key.appId)\"")
        }
        if let candidate, let currentSchema = entry.schema {
            var publication = Publication(record: candidate.record, current: currentSchema, minimum: entry.app.minimumSchemaVersion)
            if schema.version == currentSchema.version, let document {
                publication.currentState = CustomizationState(revision: candidate.record.revision, schemaVersion: schema.version, document: document)
            }
            services.changes.publish(key, publication)
        }
        return response
    }

    /// 503 `write-contention`: nothing was applied; retry soon.
    private static func writeContention(_ detail: String) -> APIError {
        var contention = APIError(status: 503, slug: .writeContention, title: "Service unavailable", detail: detail)
        contention.headers.add("Retry-After", "1")
        return contention
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

    /// The body of the answer to a write that leaves `stored` current, under the writer's version: its bytes as
    /// stored when they are that version's view (no decode and re-encode after the write), else reconciled; nil for
    /// a write answered with 204.
    private func answerDocument(_ kind: WriteKind, stored: CustomizationRecord?, schema: SchemaIndex, key: UserKey) throws -> [UInt8]? {
        guard kind.answersWithDocument else { return nil }
        if let stored, stored.servedAsStoredUnder == schema.version { return stored.document }
        return try Self.current(stored, appId: key.appId, userId: key.userId, schema: schema).document
    }

    /// The record that stores `value` (every supported version's choices) as the revision `base` names, written
    /// under `schema`; `asStored`: `value` holds only what `schema`'s clients see, so its bytes are served as stored.
    private static func nextRecord(_ value: Customization, _ base: WriteBase, schema: SchemaIndex, key: UserKey,
                                   asStored: Bool = true) -> (CustomizationRecord, Customization) {
        var next = value
        next.revision = base.nextRevision
        next.schemaVersion = schema.version
        next.updatedAt = Timestamp.now()
        let record = CustomizationRecord(appId: key.appId.text, userId: key.userId.text, revision: next.revision,
                                         schemaVersion: asStored ? schema.version : -schema.version,
                                         document: JSONWriter.bytes(next.json(appId: key.appId, userId: key.userId)), updatedAt: next.updatedAt!)
        return (record, next)
    }

    /// The stored document of `record` (every supported version's choices), decoded; the empty one for none.
    private static func storedValue(_ record: CustomizationRecord?, _ key: UserKey, _ documents: DecodedDocuments) throws -> Customization {
        guard let record else { return .empty }
        return try documents.decodeStored(record.document, of: key)
    }

    /// What a client of `schema` sees of the stored document: itself when its bytes are that version's view.
    private static func view(_ stored: Customization, of record: CustomizationRecord?, under schema: SchemaIndex) -> Customization {
        record?.servedAsStoredUnder == schema.version ? stored : Reconciler.reconcile(stored, with: schema)
    }

    /// The next record for a write that makes `next` the stored document (before pruning), or nil when the stored
    /// choices stay the same. `view` is `next` as the writer's version sees it, when known.
    private static func candidate(_ next: Customization, view: Customization?, stored: Customization, _ base: WriteBase,
                                  _ versions: WriteVersions, _ key: UserKey, _ documents: DecodedDocuments) throws -> Candidate? {
        let schema = versions.served
        // Nothing to store when the stored choices stay the same, whichever version wrote them last (a client that
        // sends back what it sees changes nothing, and keeps the revision and every device's ETag; what no supported
        // version has goes at the next write that changes something); with none stored, the empty customization at
        // revision 0 is what a first no-op write leaves.
        if next.sameChoices(as: stored) { return nil }
        var value = next
        var dropped = false
        // Whether `value` is all the writer's version sees (the hot path: a version's own view written back).
        let asStored: Bool
        if let view, value.sameChoices(as: view) {
            asStored = true
        } else {
            // It keeps something the writer's version cannot see: drop what no supported version can name (with one
            // version served, that is the writer's own).
            let supported = versions.several ? try versions.requireSupported() : SupportedVersions([schema])
            (value, dropped) = supported.prune(value)
            if dropped, value.sameChoices(as: stored) { return nil }
            let seen = view == nil || dropped ? Reconciler.reconcile(value, with: schema) : view!
            asStored = value.sameChoices(as: seen)
        }
        let (record, stored) = nextRecord(value, base, schema: schema, key: key, asStored: asStored)
        // The next write of this user starts from these bytes: it finds them decoded (kept whether or not this
        // one commits, since an entry answers only for its exact bytes).
        documents.encoded(record.document, from: stored, of: key)
        return Candidate(record: record, dropped: dropped)
    }

    /// A write that edits the choices the writer's version sees: nil when the stored ones stay the same. What the
    /// writer changed is folded into the stored document (`VersionMerge.merge`); choices about ids its version
    /// lacks stay as stored.
    func edit(
        _ request: HTTPRequest, _ context: RouteContext, kind: WriteKind,
        change: @escaping @Sendable (Customization, SchemaIndex) throws -> Customization
    ) async throws -> HTTPResponse {
        let documents = services.documents
        return try await write(request, context, kind: kind) { base, versions, key in
            let schema = versions.served
            let stored = try Self.storedValue(base.record, key, documents)
            let view = Self.view(stored, of: base.record, under: schema)
            let changed = try change(view, schema)
            let next = base.record?.servedAsStoredUnder == schema.version ? changed : VersionMerge.merge(stored: stored, view: view, edited: changed)
            if versions.several, changed.tabs != view.tabs { try Self.checkOtherVersions(from: stored, to: next, versions) }
            return try Self.candidate(next, view: changed, stored: stored, base, versions, key, documents)
        }
    }

    /// The writer's rules checked its own view; a visibility it changed may be another version's last visible tab
    /// (the same Home, hidden from the new app while the old one had hidden everything else). So the rule that a
    /// change may not leave no visible tab is checked under every supported version (while they are few:
    /// `AppCache.maxCheckedVersions`).
    /// - Throws: `RuleRefusal` `no-visible-tab` naming the version left with none.
    private static func checkOtherVersions(from stored: Customization, to next: Customization, _ versions: WriteVersions) throws {
        for index in try versions.requireIndexes() where index.version != versions.served.version {
            let rules = CustomizationRules(index)
            if let refusal = rules.noVisibleTabRefusal(from: Reconciler.reconcile(stored, with: index), to: Reconciler.reconcile(next, with: index)) {
                throw RuleRefusal([Violation(pointer: "", code: refusal.code,
                                             detail: refusal.detail + " for the clients of schema version \(index.version)")])
            }
        }
    }

    /// A write that makes `document` the stored document whole (every version's choices: a revert), pruned to
    /// what the supported versions can name.
    func replaceStored(_ request: HTTPRequest, _ context: RouteContext, kind: WriteKind, with document: Customization) async throws -> HTTPResponse {
        let documents = services.documents
        return try await write(request, context, kind: kind) { base, versions, key in
            let stored = try Self.storedValue(base.record, key, documents)
            return try Self.candidate(document, view: nil, stored: stored, base, versions, key, documents)
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

    /// Forgets the user's choices as the writer's version sees them (choices only other supported versions have stay,
    /// docs/domain.md "Several app versions at once"). The revision moves forward (the empty customization is stored as the next revision), so
    /// an ETag is never reused for different content. A customization that is already forgotten stays as it is (no
    /// new revision, history row or event), as a PUT of the same choices does. While the app serves one version,
    /// what is stored is decoded only when it is small enough to be the empty customization: any other document,
    /// even one an older version accepted whatever its size, or one that no longer decodes, is replaced without
    /// being read. With several versions the stored document is decoded to keep the others' choices; one that no
    /// longer decodes is replaced whole.
    func deleteCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let documents = services.documents
        return try await write(request, context, kind: WriteKind(change: .delete, answersWithDocument: false)) { base, versions, key in
            guard let record = base.record else { return nil }
            let schema = versions.served
            if versions.several, let stored = try? Self.storedValue(record, key, documents) {
                let view = Self.view(stored, of: record, under: schema)
                var empty = Customization.empty
                empty.schemaVersion = schema.version
                return try Self.candidate(VersionMerge.merge(stored: stored, view: view, edited: empty), view: empty, stored: stored, base, versions, key, documents)
            }
            if record.servedAsStoredUnder == schema.version, record.document.count <= Self.maxEmptyDocumentBytes,
               let stored = try? Customization.decodeStored(record.document), stored.sameChoices(as: .empty)
            {
                return nil
            }
            return Candidate(record: Self.nextRecord(.empty, base, schema: schema, key: key).0)
        }
    }

    /// An upper bound on the stored form of the empty customization (its two ids, each escaped at most to twice
    /// its size, with its revision, time and room to spare): a larger document says something, and is not
    /// decoded to find out.
    static let maxEmptyDocumentBytes = 4 * Identifier.maxBytes + 512
}
