import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// The writes PUT, PATCH, revert and DELETE make, each computing its next revision from the stored one.
extension CustomizationWrites {
    /// A write that edits the choices the writer's version sees: nothing is stored when they stay the same. What
    /// the writer changed is folded into the stored document (`VersionMerge.merge`); choices about ids its version
    /// lacks stay as stored.
    /// - Throws: what `write` throws, and what `change` throws.
    package func edit(
        _ request: WriteRequest, kind: Kind, change: @escaping @Sendable (Customization, SchemaIndex) throws -> Customization
    ) async throws -> WriteOutcome {
        let documents = self.documents
        return try await write(request, kind: kind) { base, versions, key in
            let schema = versions.served
            let stored = try Self.storedValue(base.record, key, documents)
            let view = Self.view(stored, of: base.record, under: schema)
            let changed = try change(view, schema)
            let next = base.record?.servedAsStoredUnder == schema.version ? changed : VersionMerge.merge(stored: stored, view: view, edited: changed)
            if versions.several, changed.tabs != view.tabs { try Self.checkOtherVersions(from: stored, to: next, versions) }
            return try Self.candidate(next, view: changed, stored: stored, base, versions, key, documents)
        }
    }

    /// A write that makes `document` the stored document whole (every version's choices: a revert), pruned to
    /// what the supported versions can name.
    package func replaceStored(_ request: WriteRequest, kind: Kind, with document: Customization) async throws -> WriteOutcome {
        let documents = self.documents
        return try await write(request, kind: kind) { base, versions, key in
            let stored = try Self.storedValue(base.record, key, documents)
            return try Self.candidate(document, view: nil, stored: stored, base, versions, key, documents)
        }
    }

    /// Forgets the user's choices as the writer's version sees them (choices only other supported versions have stay,
    /// docs/domain.md "Several app versions at once"). The revision moves forward (the empty customization is stored as the next revision), so
    /// an ETag is never reused for different content. A customization that is already forgotten stays as it is (no
    /// new revision, history row or event), as a PUT of the same choices does. While the app serves one version,
    /// what is stored is decoded only when it is small enough to be the empty customization: any other document,
    /// even one an older version accepted whatever its size, or one that no longer decodes, is replaced without
    /// being read. With several versions the stored document is decoded to keep the others' choices; one that no
    /// longer decodes is replaced whole. Answered without a document.
    package func forget(_ request: WriteRequest) async throws -> WriteOutcome {
        let documents = self.documents
        return try await write(request, kind: Kind(change: .delete, answersWithDocument: false)) { base, versions, key in
            guard let record = base.record else { return nil }
            let schema = versions.served
            if versions.several, let stored = try? Self.storedValue(record, key, documents) {
                let view = Self.view(stored, of: record, under: schema)
                var empty = Customization.empty
                empty.schemaVersion = schema.version
                return try Self.candidate(
                    VersionMerge.merge(stored: stored, view: view, edited: empty), view: empty, stored: stored, base, versions, key, documents)
            }
            if record.servedAsStoredUnder == schema.version, record.document.count <= Self.maxEmptyDocumentBytes,
               let stored = try? Customization.decodeStored(record.document), stored.sameChoices(as: .empty)
            {
                return nil
            }
            return Candidate(record: Self.nextRecord(.empty, base, schema: schema, key: key).0)
        }
    }

    /// The record that stores `value` (every supported version's choices) as the revision `base` names, written
    /// under `schema`; `asStored`: `value` holds only what `schema`'s clients see, so its bytes are served as stored.
    private static func nextRecord(_ value: Customization, _ base: Base, schema: SchemaIndex, key: UserKey,
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
    private static func candidate(_ next: Customization, view: Customization?, stored: Customization, _ base: Base,
                                  _ versions: Versions, _ key: UserKey, _ documents: DecodedDocuments) throws -> Candidate? {
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

    /// The writer's rules checked its own view; a visibility it changed may be another version's last visible tab
    /// (the same Home, hidden from the new app while the old one had hidden everything else). So the rule that a
    /// change may not leave no visible tab is checked under every supported version (while they are few:
    /// `AppCache.maxCheckedVersions`).
    /// - Throws: `RuleRefusal` `no-visible-tab` naming the version left with none.
    private static func checkOtherVersions(from stored: Customization, to next: Customization, _ versions: Versions) throws {
        for index in try versions.requireIndexes() where index.version != versions.served.version {
            let rules = CustomizationRules(index)
            if let refusal = rules.noVisibleTabRefusal(from: Reconciler.reconcile(stored, with: index), to: Reconciler.reconcile(next, with: index)) {
                throw RuleRefusal([Violation(pointer: "", code: refusal.code,
                                             detail: refusal.detail + " for the clients of schema version \(index.version)")])
            }
        }
    }

    /// An upper bound on the stored form of the empty customization (its two ids, each escaped at most to twice
    /// its size, with its revision, time and room to spare): a larger document says something, and is not
    /// decoded to find out.
    package static let maxEmptyDocumentBytes = 4 * Identifier.maxBytes + 512
}
