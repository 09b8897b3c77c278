import TabStoreDomain
import TabStoreSupport

/// Stored customization documents as decoded values, one per app × user, so a write does not parse again the
/// document that user's previous write just encoded (a tenth of a PATCH's CPU was that parse).
///
/// An entry keeps the document's bytes beside its value and answers only for exactly those bytes. Decoding is
/// a function of the bytes, so an entry never goes stale, whatever was committed, rolled back, erased or
/// written by another replica since: nothing invalidates it, it only ages out (`ByteBoundedCache`).
package final class DecodedDocuments: Sendable {
    package struct Entry: Sendable {
        package let document: [UInt8]
        package let value: Customization
    }

    private let cache: ByteBoundedCache<Entry>

    /// - Parameter budget: bytes to keep; 0 keeps none (every write decodes).
    package init(budget: Int) { cache = ByteBoundedCache(budget: budget) }

    package var statistics: CacheStatistics { cache.statistics }

    /// `Customization.decodeStored(document)`, from memory when these bytes were the user's last decoded or encoded.
    /// - Throws: what `decodeStored` throws for damaged bytes (never kept).
    package func decodeStored(_ document: [UInt8], of key: UserKey) throws -> Customization {
        let cacheKey = Self.key(key)
        // Usually the very array the writer stored and the record cache serves, so the comparison is by identity.
        if let entry = cache.value(cacheKey, where: { $0.document == document }) { return entry.value }
        let value = try Customization.decodeStored(document)
        keep(Entry(document: document, value: value), cacheKey)
        return value
    }

    /// Remembers that `document` (what a write is about to store) is the encoding of `value`. The round trip is
    /// exact (`Customization.json` writes every field `decode` reads); debug builds check it on every write.
    package func encoded(_ document: [UInt8], from value: Customization, of key: UserKey) {
        assert((try? Customization.decodeStored(document)) == value, "a stored document must decode to the value it was encoded from")
        keep(Entry(document: document, value: value), Self.key(key), always: true)  // a write's: the user's next write starts here
    }

    private static func key(_ key: UserKey) -> ByteKey { ByteKey(key.appId.text, key.userId.text) }

    /// The cost of an entry: the document, and about twice its size for the decoded value (ids as `String`s,
    /// dictionaries and arrays), the key and the entry's bookkeeping.
    private func keep(_ entry: Entry, _ key: ByteKey, always: Bool = false) {
        cache.put(key, entry, cost: 3 * entry.document.count + key.bytes.count + 160, always: always)
    }
}
