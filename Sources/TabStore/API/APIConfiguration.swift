import TabStoreSupport
/// How the API behaves, apart from the HTTP server's limits.
package struct APIConfiguration: Sendable {
    /// The operator's bearer token; nil refuses every operator call.
    package var adminToken: String?
    /// Origins allowed to call from a browser (`*` for any); none by default.
    package var allowedOrigins: [String] = []
    /// Whether `/metrics` needs the operator token.
    package var metricsRequireAuth = false
    /// One JSON access-log line per request.
    package var accessLog = true
    /// Whether `/console` and its assets are served (`--console`). Off unless the service turns it on: the
    /// console is the binary's operator page, not part of the API (openapi.yaml does not list it).
    package var console = false
    /// Largest stored customization document, in bytes: a write that would store more is refused with 422
    /// `customization-too-large`, so no user can make every later read and write of theirs expensive.
    package var maxCustomizationBytes = 64 * 1024
    /// Documents up to this size are decoded and laid out on the event loop; larger ones go to the pool.
    package var inlineDocumentBytes = 16 * 1024
    /// Revisions kept per user in the history (`--history-revisions`); 0 keeps none.
    package var historyRevisions = 100
    /// Audit log entries kept (`--audit-retention`): each new entry removes those past it.
    package var auditRetention = 100_000
    /// How long an answer to a write with an `Idempotency-Key` is kept, in seconds (at least a day).
    package var idempotencySeconds = 86_400
    /// Answers kept per user within `idempotencySeconds`; past it the oldest go first.
    package var maxIdempotentAnswersPerUser = 1_000
    /// Long polls waiting at once, over all users; more get 503 with `Retry-After`.
    package var maxLongPolls = 10_000
    /// Change-feed streams and long polls of one user at once; more get 429.
    package var maxFollowersPerUser = 32
    /// Seconds between keep-alive comments on a change-feed stream. docs/devices.md promises one at least every 15 s;
    /// the event loops look at stream deadlines every 200 ms, so 12 leaves room.
    package var feedKeepAliveSeconds = 12.0
    /// Bytes kept of encoded layouts and reconciled customizations (`APIServices.representations`); 0 keeps none.
    package var representationCacheBytes = 8 << 20
    /// Bytes kept of decoded stored documents (`ApplicationServices.documents`); 0 keeps none.
    package var documentCacheBytes = 4 << 20
    /// Bytes kept of rendered history pages (`APIServices.historyPages`); 0 renders every page.
    package var historyPageCacheBytes = 16 << 20
    /// History pages and exports read and rendered at once, over all users (`HistoryReads`).
    package var concurrentHistoryReads = 1
    /// History reads of one user waiting behind the one in flight; more get 429 `too-many-history-reads`.
    package var historyReadsWaitingPerUser = 4
    /// Bytes of history pages one user is served a second; past it 429 `too-many-history-reads` (one page may overdraw).
    package var historyBytesPerUserPerSecond = 8 << 20
    /// Tests: awaited by each history read or export once it holds its slot, before it reads the store.
    package var historyReadPause: (@Sendable () async -> Void)?
    /// Bytes kept of verified user tokens (`APIServices.tokens`); 0 verifies every request's token.
    package var tokenCacheBytes = 8 << 20
    /// Seconds since 1970; injectable so token expiry is testable.
    package var clock: @Sendable () -> Int = { Int(Timestamp.unixNow()) }

    package init(adminToken: String? = nil) { self.adminToken = adminToken }

    /// Default page size of `GET /v1/apps`, and the largest allowed.
    package static let defaultPageSize = 100
    package static let maxPageSize = 1000
    /// Most revisions one history page lists, and the default.
    package static let maxHistoryPage = 100
    package static let defaultHistoryPage = 20
    /// Longest `waitSeconds` of a long poll.
    package static let maxWaitSeconds = 60
}
