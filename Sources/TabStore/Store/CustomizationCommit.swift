/// What kind of write made a revision (docs/devices.md "History and undo": the history's `change`).
package enum ChangeKind: String, Sendable, CaseIterable {
    case put, patch, delete, revert
}

/// One kept revision of a user's customization: the document as stored then, and what made it.
package struct HistoryRecord: Sendable, Equatable {
    package let revision: Int
    package let schemaVersion: Int
    /// A `ChangeKind` raw value as stored (kept as text: a row a newer version wrote still reads).
    package let change: String
    /// The PATCH's operations: its request body as received (a JSON object whose `operations` member is the
    /// list), or, in rows stored before bodies were kept as received, the list as a JSON array; nil for other
    /// changes, or when it was not kept.
    package let operations: [UInt8]?
    package let document: [UInt8]
    package let updatedAt: String
    /// Who made it (`HistoryActor.stored`); nil in rows stored before actors were recorded.
    package let actor: String?
    /// A revert's target revision; nil for other changes and rows stored before targets were recorded.
    package let targetRevision: Int?

    package init(revision: Int, schemaVersion: Int, change: String, operations: [UInt8]?, document: [UInt8], updatedAt: String,
                 actor: String? = nil, targetRevision: Int? = nil) {
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.change = change
        self.operations = operations
        self.document = document
        self.updatedAt = updatedAt
        self.actor = actor
        self.targetRevision = targetRevision
    }
}

/// Who made a revision, as its history row stores it: `user` (the path's user, with their own token) or
/// `operator:NAME` (an operator token's name). Bounded: an operator token's name is at most 64 bytes.
package enum HistoryActor: Sendable, Equatable {
    case user
    case operatorToken(String)

    package var stored: String {
        switch self {
        case .user: "user"
        case .operatorToken(let name): "operator:" + name
        }
    }

    /// A stored value; nil (rows from before actors were recorded) reads as the user, and so does anything unknown.
    package init(stored: String?) {
        guard let stored, stored.utf8.starts(with: "operator:".utf8) else { self = .user; return }
        self = .operatorToken(String(stored.dropFirst("operator:".count)))
    }
}

/// The first answer to a write sent with an `Idempotency-Key`, kept so a repeat gets it again.
package struct IdempotentAnswer: Sendable, Equatable {
    /// The client's key (1-255 visible ASCII bytes), scoped to the app and user.
    package let key: String
    /// SHA-256 of the request's method, path and body: a repeat must match it.
    package let requestDigest: [UInt8]
    package let status: Int
    package let etag: String?
    package let body: [UInt8]
    /// Seconds since 1970.
    package let createdAt: Int

    package init(key: String, requestDigest: [UInt8], status: Int, etag: String?, body: [UInt8], createdAt: Int) {
        self.key = key
        self.requestDigest = requestDigest
        self.status = status
        self.etag = etag
        self.body = body
        self.createdAt = createdAt
    }
}

/// One write of a user's customization as the backend commits it, in one transaction: the new revision
/// (if any), its history row with the retention applied, and the idempotent answer (if any).
package struct CustomizationCommit: Sendable {
    package let appId: String
    package let userId: String
    /// The stored revision the change was computed from (0 for none): compare-and-set.
    package let expectedRevision: Int
    /// The next revision; nil when nothing changes (only `answer` is stored then).
    package let record: CustomizationRecord?
    package let change: ChangeKind
    /// For a PATCH: its request body as received (nil: not kept).
    package let operations: [UInt8]?
    /// Revisions kept per user, the new one included; 0 keeps none.
    package let historyRevisions: Int
    package let answer: IdempotentAnswer?
    /// Answers created before this (seconds since 1970) have expired: they no longer count, and a few are
    /// removed by each commit that stores an answer.
    package let answersExpireBefore: Int
    /// Answers kept per user: past it, the oldest go first.
    package let maxAnswersPerUser: Int
    /// Who writes (`HistoryActor.stored`), kept with the history row.
    package let actor: String?
    /// A revert's target revision, kept with the history row.
    package let targetRevision: Int?

    package init(appId: String, userId: String, expectedRevision: Int, record: CustomizationRecord?, change: ChangeKind,
                 operations: [UInt8]? = nil, historyRevisions: Int, answer: IdempotentAnswer? = nil, answersExpireBefore: Int = 0,
                 maxAnswersPerUser: Int = 1000, actor: String? = nil, targetRevision: Int? = nil) {
        self.actor = actor
        self.targetRevision = targetRevision
        self.appId = appId
        self.userId = userId
        self.expectedRevision = expectedRevision
        self.record = record
        self.change = change
        self.operations = operations
        self.historyRevisions = historyRevisions
        self.answer = answer
        self.answersExpireBefore = answersExpireBefore
        self.maxAnswersPerUser = maxAnswersPerUser
    }
}

/// Everything stored about one user in one app (export).
package struct UserData: Sendable, Equatable {
    package let appId: String
    package let customization: CustomizationRecord?
    /// Newest first.
    package let history: [HistoryRecord]
    /// The idempotency keys kept (key and when; the answers are copies of revisions), newest first.
    package let answers: [(key: String, status: Int, createdAt: Int)]

    package init(appId: String, customization: CustomizationRecord?, history: [HistoryRecord], answers: [(key: String, status: Int, createdAt: Int)])
    {
        self.appId = appId
        self.customization = customization
        self.history = history
        self.answers = answers
    }

    package static func == (lhs: UserData, rhs: UserData) -> Bool {
        lhs.appId == rhs.appId && lhs.customization == rhs.customization && lhs.history == rhs.history
            && lhs.answers.elementsEqual(rhs.answers) { $0.key == $1.key && $0.status == $1.status && $0.createdAt == $1.createdAt }
    }
}
