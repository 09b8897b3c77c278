import TabStoreApplication
import TabStoreAuth
import TabStoreHTTP
import TabStoreSupport

/// Followers' credentials, checked again once they are registered.
extension APIServices {
    /// For a follower registered (`ChangeHub.follow`) after its caller was authorized: 401 when the app's
    /// signing secret is no longer the one that verified the caller's token. A rotation stores the secret, drops
    /// the cached app, then ends the registered followers; one registered after that is caught here, since the
    /// app read now is the rotated one.
    /// - Throws: `APIError` 401 (the secret was rotated, or the app is gone).
    func requireCredentialsCurrent(_ context: RouteContext, _ appId: Identifier) async throws {
        if let name = context.revocableOperatorName {
            // A named operator token revoked between its check and the registration: its revocation ended the
            // followers registered then; this one reads the tokens as they are now.
            let bytes = Array(name.utf8)
            guard try await store.operatorTokens().contains(where: { Array($0.name.utf8) == bytes }) else { throw APIError.operatorTokenRevoked }
            return
        }
        guard let key = context.credentialsKey else { return }
        let current = try await apps.entry(appId)?.app.signingSecret
        guard let current, Crypto.constantTimeEqual(Array(current.utf8), Array(key.utf8)) else { throw APIError.credentialsRevoked }
    }
}
