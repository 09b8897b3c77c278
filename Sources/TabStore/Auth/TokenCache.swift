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

    /// - Parameter budget: bytes of memory for verified tokens (`--cache-bytes` gives it a share).
    package init(budget: Int) {
        entries = ByteBoundedCache(budget: budget)
    }

    /// Token (keyed by its exact bytes: two canonically equivalent spellings are two tokens) → verification.
    private let entries: ByteBoundedCache<Entry>

    package func lookup(_ token: String) -> Entry? { entries.value(ByteKey(Array(token.utf8))) }

    /// Bounded by bytes, evicting the least recently used first (CLOCK). Once full, a token is kept at its second
    /// verification (`ByteBoundedCache`'s admission), so tokens seen once never push out the ones in use.
    package func store(_ token: String, _ entry: Entry) {
        let key = ByteKey(Array(token.utf8))
        let cost = 192 + key.bytes.count + entry.appId.byteCount + entry.userId.byteCount + entry.audience.reduce(0) { $0 + 16 + $1.byteCount }
        entries.put(key, entry, cost: cost)
    }

    package var statistics: CacheStatistics { entries.statistics }
}
