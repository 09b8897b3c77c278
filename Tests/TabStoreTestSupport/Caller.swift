import Testing

/// Who calls, for authorization tests: every kind of credential a request can carry.
package enum Caller: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// No `Authorization` field.
    case anonymous
    /// Not a JWT at all.
    case garbage
    /// Signed with a secret that is not the app's.
    case forged
    /// The user's token with its signature's last characters replaced.
    case tampered
    /// `alg: none` and an empty signature.
    case algNone
    /// Expired two minutes ago.
    case expired
    /// Issued five minutes in the future.
    case notYetValid
    /// Another user of the same app.
    case otherUser
    /// The same user id, of the other app.
    case otherApp
    /// The user whose data the request names.
    case user
    /// The operator's token.
    case `operator`

    /// Callers whose credentials prove nothing: 401 wherever credentials are needed.
    package static let unauthenticated: [Caller] = [.anonymous, .garbage, .forged, .tampered, .algNone, .expired, .notYetValid]

    package var testDescription: String { rawValue }
}
