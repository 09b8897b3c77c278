import TabStoreAuth
import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// The write of a customization, the heart of the product, as a use case over the storage contract: a user's
/// writes take turns, the preconditions are checked against what is stored, the next revision is computed off the
/// storage writer and committed by compare-and-set with its history row and its idempotent answer, and the user's
/// followers are told after the commit. PUT, PATCH, DELETE and revert (`edit`, `forget`, `replaceStored`) go
/// through `write`. No HTTP here: the API parses requests into these values and answers the outcome.
package struct CustomizationWrites: Sendable {
    /// What a write is bounded by, from the service's configuration.
    package struct Limits: Sendable {
        package var maxCustomizationBytes: Int
        /// Revisions of history kept per user (0: none, and a PATCH's operations are not kept).
        package var historyRevisions: Int
        /// How long an idempotent answer is replayed.
        package var idempotencySeconds: Int
        package var maxIdempotentAnswersPerUser: Int
        /// Seconds since 1970.
        package var clock: @Sendable () -> Int

        package init(maxCustomizationBytes: Int, historyRevisions: Int, idempotencySeconds: Int, maxIdempotentAnswersPerUser: Int,
                     clock: @escaping @Sendable () -> Int) {
            self.maxCustomizationBytes = maxCustomizationBytes
            self.historyRevisions = historyRevisions
            self.idempotencySeconds = idempotencySeconds
            self.maxIdempotentAnswersPerUser = maxIdempotentAnswersPerUser
            self.clock = clock
        }
    }

    /// How many times a write recomputes after another server's write won the compare-and-set.
    private static let writeAttempts = 64

    package let store: any TabStoreBackend
    package let apps: AppCache
    /// Writes of one user take turns here; so do erases and the publications that follow each.
    package let userLocks: KeyedLock<UserKey>
    package let changes: ChangeHub
    package let documents: DecodedDocuments
    package let limits: Limits

    package init(store: any TabStoreBackend, apps: AppCache, userLocks: KeyedLock<UserKey>, changes: ChangeHub, documents: DecodedDocuments,
                 limits: Limits) {
        self.store = store
        self.apps = apps
        self.userLocks = userLocks
        self.changes = changes
        self.documents = documents
        self.limits = limits
    }

    /// Stores the next revision computed by `next` from the latest stored record of the request's user,
    /// with its history row and, for a write with an idempotency key, its answer, in one transaction; then tells
    /// the user's followers. A repeat of a write whose answer is stored gets that answer again (`.replayed`).
    ///
    /// Decoding, validation and encoding happen here, on the concurrency pool, never inside the storage
    /// writer's transaction: the writer only compares the revision this was computed from and stores the
    /// bytes (compare-and-set). Writes of one user take turns in `userLocks`, so on one server the set
    /// succeeds at once, and a repeat waits for the first to commit and then finds its answer; a write from
    /// elsewhere in between (another replica) makes this recompute.
    /// - Throws: `WriteError`, `RuleRefusal`, what `next` throws, storage errors.
    package func write(_ request: WriteRequest, kind requested: Kind, next: @escaping Next) async throws -> WriteOutcome {
        let (key, entry, preconditions, idempotency) = (request.key, request.entry, request.preconditions, request.idempotency)
        let kind = {
            var kind = requested
            kind.actor = request.actor
            return kind
        }()
        let served = request.served
        let versions = Versions(served: served, supported: entry.parts.supported, several: entry.servesSeveralVersions, indexes: entry.parts.indexes)
        return try await userLocks.withLock(key) { () async throws -> WriteOutcome in
            // A stored answer is looked up only when this key may have one: the first attempt goes straight to the
            // commit, which stores the answer with the change or finds the key taken (`answerExists`, then the
            // next attempt replays); a write refused on the way (412, 409, a rule) looks before refusing. So a
            // new key costs no read, and a repeat still gets the first answer whatever happened since.
            @Sendable func attempt(_ number: Int) async throws -> WriteOutcome? {
                if number > 0, let idempotency, let stored = try await replay(idempotency, key) { return .replayed(stored) }
                do {
                    return try await attemptWrite(kind, key: key, entry: entry, versions: versions, preconditions: preconditions,
                                                  idempotency: idempotency, next: next).map(WriteOutcome.written)
                } catch {
                    if let idempotency, let stored = try await replay(idempotency, key) { return .replayed(stored) }
                    throw error
                }
            }
            if let outcome = try await attempt(0) { return outcome }
            // Another server's write won the compare-and-set: the next attempts take the user's write turn across
            // servers (the database's), where only a first attempt elsewhere can still win, once per write. The
            // bound is the database's (a turn not had in time is 503 database-unavailable), not a count of losses.
            return try await store.withWriteTurn(appId: key.appId.text, userId: key.userId.text) { () async throws -> WriteOutcome in
                for number in 1..<Self.writeAttempts {
                    if let outcome = try await attempt(number) { return outcome }
                }
                throw WriteError.contention("the customization kept changing while this write was computed; retry")
            }
        }
    }

    /// One attempt of `write`: reads the stored record, checks the preconditions, computes and commits.
    /// - Returns: what was written, or nil when another write won the compare-and-set or the key already has an answer.
    private func attemptWrite(
        _ kind: Kind, key: UserKey, entry: AppCache.Entry, versions: Versions, preconditions: WritePreconditions, idempotency: IdempotentWrite?,
        next: @escaping Next
    ) async throws -> WrittenCustomization? {
        let schema = versions.served
        let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
        let base = record?.revision ?? 0
        let floor = record == nil ? try await store.revisionFloor(appId: key.appId.text, userId: key.userId.text) : 0
        // Against what was read, named as a GET under the writer's version would name it now (the revision and
        // that version): a tag from another version, or from before a schema change, does not match. The set below
        // compares revisions, so what was checked here is what gets replaced. A customization "exists" once it has
        // a revision.
        let current = CustomizationTag.opaque(revision: base, schemaVersion: schema.version)
        if !preconditions.hold(current: current, exists: base > 0) {
            throw WriteError.preconditionFailed(current: current, detail: "the customization is now \"\(current)\"; read it again and retry")
        }
        let writeBase = Base(record: record, nextRevision: max(base, floor) + 1)
        let candidate: Candidate?
        do {
            candidate = try next(writeBase, versions, key)
        } catch is SupportedVersionsNeeded {
            // The stored document keeps what the writer's version cannot see: read which versions are supported
            // (once per cached app, shared by concurrent writers) and compute again.
            let loaded = Versions(served: versions.served, supported: try await apps.supported(entry), several: versions.several,
                                  indexes: try await apps.supportedIndexes(entry))
            candidate = try next(writeBase, loaded, key)
        }
        if let candidate, candidate.record.document.count > limits.maxCustomizationBytes {
            throw RuleRefusal([Violation(pointer: "", code: .customizationTooLarge,
                    detail:
                        "the customization would take \(candidate.record.document.count) bytes; at most \(limits.maxCustomizationBytes) are stored")
            ])
        }
        let document = try answerDocument(kind, stored: candidate?.record ?? record, schema: schema, key: key)
        let written = WrittenCustomization(revision: (candidate?.record ?? record)?.revision ?? 0, schemaVersion: schema.version, document: document)
        let now = limits.clock()
        let stored = idempotency.map { idempotency in
            let answer = idempotency.answer(written)
            return IdempotentAnswer(key: idempotency.key, requestDigest: idempotency.digest, status: answer.status, etag: answer.etag,
                                    body: answer.body, createdAt: now)
        }
        guard candidate != nil || stored != nil else { return written }
        // Choices only versions below the minimum had are about to go: from now on the minimum never goes below
        // it (checked in the database, so a minimum lowered meanwhile on another replica stops this write).
        if let candidate, candidate.dropped, entry.app.minimumSchemaVersion > entry.app.schemaVersionFloor + 1, !entry.parts.minimumNoted {
            guard try await store.noteMinimumApplied(appId: key.appId.text, minimum: entry.app.minimumSchemaVersion) else {
                apps.invalidate(key.appId)
                throw WriteError.contention("the app's minimum schema version changed while this write was computed; retry")
            }
            // The cached record's `minimumApplied` is now behind the database's; only the minimum's route reads it,
            // and it reads the database. The entry (and the supported versions it holds) stays.
            entry.parts.minimumNoted = true
        }
        do {
            try await store.commitCustomization(CustomizationCommit(
                appId: key.appId.text, userId: key.userId.text, expectedRevision: base, record: candidate?.record, change: kind.change,
                operations: kind.operations, historyRevisions: limits.historyRevisions, answer: stored,
                answersExpireBefore: now - limits.idempotencySeconds, maxAnswersPerUser: limits.maxIdempotentAnswersPerUser,
                actor: kind.actor.stored, targetRevision: kind.targetRevision))
        } catch StoreConflict.revisionMismatch, StoreConflict.answerExists {
            return nil  // changed meanwhile by another server, or the key has its answer: read again, check, compute again
        } catch StoreConflict.notFound {
            throw WriteError.appNotFound(key.appId)
        }
        if let candidate, let currentSchema = entry.schema {
            var publication = Publication(record: candidate.record, current: currentSchema, minimum: entry.app.minimumSchemaVersion)
            if schema.version == currentSchema.version, let document {
                publication.currentState = CustomizationState(revision: candidate.record.revision, schemaVersion: schema.version, document: document)
            }
            changes.publish(key, publication)
        }
        return written
    }

    /// The stored first answer of a repeated keyed write (nil for a new key).
    /// - Throws: `WriteError.idempotencyKeyReused` when the key was used for another request.
    package func replay(_ idempotency: IdempotentWrite, _ key: UserKey) async throws -> IdempotentAnswer? {
        let notBefore = limits.clock() - limits.idempotencySeconds
        guard
            let stored = try await store.idempotentAnswer(appId: key.appId.text, userId: key.userId.text, key: idempotency.key, notBefore: notBefore)
        else { return nil }
        guard Crypto.constantTimeEqual(stored.requestDigest, idempotency.digest) else { throw WriteError.idempotencyKeyReused }
        return stored
    }

    /// The body of the answer to a write that leaves `stored` current, under the writer's version: its bytes as
    /// stored when they are that version's view (no decode and re-encode after the write), else reconciled; nil for
    /// a write answered without one.
    private func answerDocument(_ kind: Kind, stored: CustomizationRecord?, schema: SchemaIndex, key: UserKey) throws -> [UInt8]? {
        guard kind.answersWithDocument else { return nil }
        if let stored, stored.servedAsStoredUnder == schema.version { return stored.document }
        return try CurrentCustomization.of(stored, appId: key.appId, userId: key.userId, schema: schema).document
    }
}
