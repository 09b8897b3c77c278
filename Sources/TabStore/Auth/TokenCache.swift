import TabStoreSupport

/// Verified user tokens, so a client that sends the same JWT on every request pays for base64, JSON and
/// HMAC once. An entry records the secret that verified it: after a rotation the app's secret differs
/// and the entry no longer counts. Expiry and not-before are still checked on every use.
package final class TokenCache: Sendable {
    package struct Entry: Sendable {
        /// The app whose secret verified the token (one of `audience`).
        package let appId: Identifier
        /// Every app the token lists, so a hit is used only where the same app would verify it again.
        package let audience: [Identifier]
        package let userId: Identifier
        package let secret: String
        package let expiresAt: Int
        package let notBefore: Int?

        package init(appId: Identifier, audience: [Identifier], userId: Identifier, secret: String, expiresAt: Int, notBefore: Int?) {
            self.appId = appId
            self.audience = audience
            self.userId = userId
            self.secret = secret
            self.expiresAt = expiresAt
            self.notBefore = notBefore
        }
    }

    package init() {}

    static let maxEntries = 100_000
    /// Token (keyed by its exact bytes: two canonically equivalent spellings are two tokens) → verification;
    /// every thread reads and writes it under this lock.
    private let entries = Locked<[Identifier: Entry]>([:])

    package func lookup(_ token: String) -> Entry? { entries.withLock { $0[Identifier(token)] } }

    package func store(_ token: String, _ entry: Entry) {
        entries.withLock { entries in
            // Bounded memory: start over rather than track recency (a miss only costs one verification).
            if entries.count >= Self.maxEntries { entries.removeAll(keepingCapacity: true) }
            entries[Identifier(token)] = entry
        }
    }
}
