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
    /// Largest stored customization document, in bytes: a write that would store more is refused with 422
    /// `customization-too-large`, so no user can make every later read and write of theirs expensive.
    package var maxCustomizationBytes = 64 * 1024
    /// Documents up to this size are decoded and laid out on the event loop; larger ones go to the pool.
    package var inlineDocumentBytes = 16 * 1024
    /// Seconds since 1970; injectable so token expiry is testable.
    package var clock: @Sendable () -> Int = { Int(Timestamp.unixNow()) }

    package init(adminToken: String? = nil) { self.adminToken = adminToken }

    /// Default page size of `GET /v1/apps`, and the largest allowed.
    package static let defaultPageSize = 100
    package static let maxPageSize = 1000
}
