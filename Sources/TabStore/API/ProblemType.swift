/// The `type` of every problem the API answers, as `urn:tabstore:problem:<slug>`: stable words a client can
/// switch on. openapi.yaml lists exactly these (a test compares the two).
package enum ProblemType: String, Sendable, CaseIterable {
    case alreadyExists = "already-exists"
    case appExists = "app-exists"
    case appNotFound = "app-not-found"
    case bodyNotAllowed = "body-not-allowed"
    case concurrentRegistration = "concurrent-registration"
    case databaseUnavailable = "database-unavailable"
    case draining
    case forbidden
    case idempotencyKeyReused = "idempotency-key-reused"
    case internalError = "internal-error"
    case invalidIdempotencyKey = "invalid-idempotency-key"
    case invalidIfMatch = "invalid-if-match"
    case invalidIfNoneMatch = "invalid-if-none-match"
    case invalidParameter = "invalid-parameter"
    case invalidPath = "invalid-path"
    case invalidUserId = "invalid-user-id"
    case malformedJson = "malformed-json"
    case malformedRequest = "malformed-request"
    case methodNotAllowed = "method-not-allowed"
    case minimumSchemaVersionApplied = "minimum-schema-version-applied"
    case noRoute = "no-route"
    case noSchema = "no-schema"
    case notImplemented = "not-implemented"
    case operatorTokenNotFound = "operator-token-not-found"
    case revisionMismatch = "revision-mismatch"
    case revisionNotFound = "revision-not-found"
    case ruleViolation = "rule-violation"
    case schemaVersionNotFound = "schema-version-not-found"
    case schemaVersionRetired = "schema-version-retired"
    case storageUnavailable = "storage-unavailable"
    case tooManyFollowers = "too-many-followers"
    case tooManyHistoryReads = "too-many-history-reads"
    case tooManyWaiting = "too-many-waiting"
    case unauthorized
    case unsupportedMediaType = "unsupported-media-type"
    case writeContention = "write-contention"

    /// The problem document's `type`.
    package var uri: String { "urn:tabstore:problem:" + rawValue }
}
