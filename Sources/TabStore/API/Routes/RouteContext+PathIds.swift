import TabStoreHTTP
import TabStoreSupport

/// The ids a route's path holds, checked the same way by the authenticator (before any handler or storage
/// sees them) and by the handlers that use them.
extension RouteContext {
    /// The path's `{appId}`; an id that cannot exist is an unknown app (404), and never reaches storage.
    /// - Throws: `APIError` 404 `app-not-found`; `MissingRouteParameter` when the pattern has no `{appId}`.
    func appId() throws -> Identifier {
        let appId = Identifier(try require("appId"))
        guard appId.isValidAppId else { throw APIError.notFound(.appNotFound, "no such app; an app id is 1-128 bytes of A-Z a-z 0-9 . _ -") }
        return appId
    }

    /// The path's `{userId}`: 1-256 UTF-8 bytes without control characters, or 400.
    /// - Throws: `APIError` 400 `invalid-user-id`; `MissingRouteParameter` when the pattern has no `{userId}`.
    func userId() throws -> Identifier {
        let userId = Identifier(try require("userId"))
        guard userId.isValidId else {
            throw APIError.badRequest(.invalidUserId, "a user id is 1-\(Identifier.maxBytes) UTF-8 bytes without control characters")
        }
        return userId
    }

    /// The path's `{appId}` when the route has one and it is a valid app id (an invalid one is answered with
    /// a 404 by `checkPathIds`, after authentication).
    var validAppId: Identifier? {
        parameters["appId"].map { Identifier($0) }.flatMap { $0.isValidAppId ? $0 : nil }
    }

    /// Checks every id the route's path holds.
    /// - Throws: `APIError` 404 for an impossible app id or schema version, 400 for an invalid user id.
    func checkPathIds() throws {
        if parameters["appId"] != nil { _ = try appId() }
        if parameters["userId"] != nil { _ = try userId() }
        if let version = parameters["version"], Self.schemaVersionNumber(version) == nil {
            throw APIError.notFound(.schemaVersionNotFound, "a schema version is a positive integer")
        }
    }

    /// A schema version from the path: a positive decimal integer of at most 9 digits (never traps).
    static func schemaVersionNumber(_ text: String) -> Int? {
        guard (1...9).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(text), number > 0 else {
            return nil
        }
        return number
    }
}
