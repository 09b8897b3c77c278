/// The policies every backend keeps alike, as values: how often a user's housekeeping runs, how much of the
/// sweep of expired answers one step does, how soon a client should retry while the database cannot serve,
/// and where an idempotent answer's body is kept.
package enum StorePolicy {
    /// Housekeeping (the retention's cut, expired answers) runs once every this many revisions of a user (and
    /// for every keyed write that makes no revision), not on every write: the writer's time per write is what
    /// PATCH throughput is made of. So at most this many history rows past the retention are ever kept.
    package static let housekeepingEvery = 16

    /// Answers each step of the sweep of everyone's expired answers looks at: four times the answers the
    /// writes between two steps can add (one each), so the sweep passes over all of them again and again,
    /// never so many that one write pays for a backlog.
    package static let expiredAnswersPerHousekeeping = 64

    /// Seconds a client is told to wait (`Retry-After`) while the database cannot serve or take writes; also
    /// how often the embedded store probes a write while its writes fail.
    package static let retryAfterSeconds = 5

    /// Whether this write does the user's housekeeping: every `housekeepingEvery`-th revision, and every write
    /// that makes none (those are rare: a keyed write that changes nothing).
    package static func housekeeping(_ record: CustomizationRecord?) -> Bool {
        guard let record else { return true }
        return record.revision % housekeepingEvery == 0
    }

    /// The revision whose history row holds `commit`'s answer body byte for byte (the write stores that row in
    /// the same transaction), or nil when the answer keeps its own copy.
    package static func answerBodyRevision(_ commit: CustomizationCommit) -> Int? {
        guard let answer = commit.answer, let record = commit.record, commit.historyRevisions > 0,
              !answer.body.isEmpty, answer.body == record.document else { return nil }
        return record.revision
    }
}
