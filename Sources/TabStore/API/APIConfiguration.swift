import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
/// How the API behaves, apart from the HTTP server's limits.
public struct APIConfiguration: Sendable {
    /// The operator's bearer token; nil refuses every operator call.
    public var adminToken: String?
    /// Origins allowed to call from a browser (`*` for any); none by default.
    public var allowedOrigins: [String] = []
    /// Whether `/metrics` needs the operator token.
    public var metricsRequireAuth = false
    /// One JSON access-log line per request.
    public var accessLog = true
    /// Largest stored customization document, in bytes: a write that would store more is refused with 422
    /// `customization-too-large`, so no user can make every later read and write of theirs expensive.
    public var maxCustomizationBytes = 64 * 1024
    /// Documents up to this size are decoded and laid out on the event loop; larger ones go to the pool.
    public var inlineDocumentBytes = 16 * 1024
    /// Seconds since 1970; injectable so token expiry is testable.
    public var clock: @Sendable () -> Int = { Int(Timestamp.unixNow()) }

    public init(adminToken: String? = nil) { self.adminToken = adminToken }

    /// Default page size of `GET /v1/apps`, and the largest allowed.
    public static let defaultPageSize = 100
    public static let maxPageSize = 1000
}
