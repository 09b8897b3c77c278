
/// Verified user tokens, so a client that sends the same JWT on every request pays for base64, JSON and
/// HMAC once. An entry records the secret that verified it: after a rotation the app's secret differs
/// and the entry no longer counts. Expiry and not-before are still checked on every use.
final class TokenCache: Sendable {
    struct Entry: Sendable {
        /// The app whose secret verified the token (one of `audience`).
        let appId: Identifier
        /// Every app the token lists, so a hit is used only where the same app would verify it again.
        let audience: [Identifier]
        let userId: Identifier
        let secret: String
        let expiresAt: Int
        let notBefore: Int?
    }

    static let maxEntries = 100_000
    /// Token (keyed by its exact bytes: two canonically equivalent spellings are two tokens) → verification;
    /// every thread reads and writes it under this lock.
    private let entries = Locked<[Identifier: Entry]>([:])

    func lookup(_ token: String) -> Entry? { entries.withLock { $0[Identifier(token)] } }

    func store(_ token: String, _ entry: Entry) {
        entries.withLock { entries in
            // Bounded memory: start over rather than track recency (a miss only costs one verification).
            if entries.count >= Self.maxEntries { entries.removeAll(keepingCapacity: true) }
            entries[Identifier(token)] = entry
        }
    }
}
