import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// What a write of a customization (`CustomizationWrites.write`) is given and answers: plain values, no HTTP.
extension CustomizationWrites {
    /// Whose customization a write is about, and what the writer sent beside its change.
    package struct WriteRequest: Sendable {
        package let key: UserKey
        /// The user's app, as cached.
        package let entry: AppCache.Entry
        /// The writer's schema version: the write is validated and answered under it.
        package let served: SchemaIndex
        package var preconditions: WritePreconditions
        package var idempotency: IdempotentWrite?
        /// Who writes, kept with the history row (the user themselves unless an operator token is named).
        package var actor: HistoryActor = .user

        package init(key: UserKey, entry: AppCache.Entry, served: SchemaIndex, preconditions: WritePreconditions = WritePreconditions(),
                     idempotency: IdempotentWrite? = nil) {
            self.key = key
            self.entry = entry
            self.served = served
            self.preconditions = preconditions
            self.idempotency = idempotency
        }
    }

    /// Where a write starts from.
    package struct Base: Sendable {
        /// The stored record; nil when the user has none.
        package let record: CustomizationRecord?
        /// The revision the write stores: above the stored one, and above every revision an erase removed.
        package let nextRevision: Int
    }

    /// What a write records and answers.
    package struct Kind: Sendable {
        package let change: ChangeKind
        /// A PATCH's operations as a JSON array, for the history.
        package var operations: [UInt8]?
        /// PUT, PATCH and revert answer with the whole customization; DELETE with none.
        package var answersWithDocument = true
        /// A revert's target revision, for the history.
        package var targetRevision: Int?
        /// Who writes (set from `WriteRequest.actor`), for the history.
        var actor: HistoryActor = .user

        package init(change: ChangeKind, operations: [UInt8]? = nil, answersWithDocument: Bool = true) {
            self.change = change
            self.operations = operations
            self.answersWithDocument = answersWithDocument
        }
    }

    /// The schema versions a write works with (docs/domain.md "Several app versions at once").
    package struct Versions: Sendable {
        /// The writer's version: the request is validated and answered under it.
        package let served: SchemaIndex
        /// The versions whose choices the stored document keeps; nil until a write needs them (it keeps something
        /// the writer's version cannot see), read once per cached app then.
        package let supported: SupportedVersions?
        /// Whether the app serves more than its current version.
        package let several: Bool
        /// Every supported version's index (empty past `AppCache.maxCheckedVersions`); nil until a write needs them.
        package var indexes: [SchemaIndex]?

        /// `indexes`, or the signal to read them and compute again.
        package func requireIndexes() throws -> [SchemaIndex] {
            guard let indexes else { throw SupportedVersionsNeeded() }
            return indexes
        }

        /// `supported`, or the signal to read them and compute again.
        package func requireSupported() throws -> SupportedVersions {
            guard let supported else { throw SupportedVersionsNeeded() }
            return supported
        }
    }

    /// A write needs the app's supported versions, which were not read yet.
    struct SupportedVersionsNeeded: Error {}

    /// A computed next revision.
    package struct Candidate: Sendable {
        package let record: CustomizationRecord
        /// Whether computing it dropped choices no supported version can name (some only a retired version had).
        package var dropped = false

        package init(record: CustomizationRecord, dropped: Bool = false) {
            self.record = record
            self.dropped = dropped
        }
    }

    /// Computes the next revision from where a write starts: nil when nothing changes (no new revision then).
    package typealias Next = @Sendable (Base, Versions, UserKey) throws -> Candidate?
}

/// A write's preconditions (RFC 9110 §13.1.1, §13.1.2) as entity-tag values: what `If-Match` and `If-None-Match`
/// named, compared with the customization's tag (`CustomizationTag`) as a GET under the writer's version names it.
package struct WritePreconditions: Sendable, Equatable {
    package var ifMatch: EntityTagCondition?
    package var ifNoneMatch: EntityTagCondition?

    package init(ifMatch: EntityTagCondition? = nil, ifNoneMatch: EntityTagCondition? = nil) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
    }

    /// Whether a write may replace the customization named `current` (`exists`: it has a revision, what `*` tests).
    /// `If-Match` compares strongly, `If-None-Match` weakly, as the API evaluates every request's preconditions.
    package func hold(current: String, exists: Bool) -> Bool {
        let tag = EntityTag(current)
        if let ifMatch, !ifMatch.matchesStrongly(tag, exists: exists) { return false }
        if let ifNoneMatch, ifNoneMatch.matchesWeakly(tag, exists: exists) { return false }
        return true
    }
}

/// A write sent with an idempotency key (docs/devices.md "Write exactly once: Idempotency-Key"): the key, the digest a
/// repeat must match, and how the first answer is stored (`answer`: the caller's rendering of what was written, so
/// the stored bytes are the ones it sends).
package struct IdempotentWrite: Sendable {
    package let key: String
    package let digest: [UInt8]
    package let answer: @Sendable (WrittenCustomization) -> StoredAnswer

    package init(key: String, digest: [UInt8], answer: @escaping @Sendable (WrittenCustomization) -> StoredAnswer) {
        self.key = key
        self.digest = digest
        self.answer = answer
    }
}

/// The first answer to a keyed write as it is stored (`IdempotentAnswer` without its key, digest and time).
package struct StoredAnswer: Sendable, Equatable {
    package let status: Int
    package let etag: String?
    package let body: [UInt8]

    package init(status: Int, etag: String?, body: [UInt8]) {
        self.status = status
        self.etag = etag
        self.body = body
    }
}

/// What a write left current.
package struct WrittenCustomization: Sendable, Equatable {
    package let revision: Int
    /// The writer's version, which the answer is under.
    package let schemaVersion: Int
    /// The customization under the writer's version; nil for a write answered without it (a DELETE).
    package let document: [UInt8]?

    /// The tag a GET under the writer's version names it by now.
    package var tag: String { CustomizationTag.opaque(revision: revision, schemaVersion: schemaVersion) }
}

/// How a write ended.
package enum WriteOutcome: Sendable {
    /// Computed (and committed, unless nothing changed) now.
    case written(WrittenCustomization)
    /// A repeat of a keyed write: its first answer, as stored.
    case replayed(IdempotentAnswer)
}

/// Why a write was refused, for the API to answer (beside `RuleRefusal` and the storage's errors).
package enum WriteError: Error, Sendable, Equatable {
    /// The preconditions do not hold against the customization, now tagged `current`.
    case preconditionFailed(current: String, detail: String)
    /// The app is gone.
    case appNotFound(Identifier)
    /// Nothing was applied: the customization (or the app's minimum) kept changing; retry soon.
    case contention(String)
    /// The idempotency key was used for another request.
    case idempotencyKeyReused
}
