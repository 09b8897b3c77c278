import TabStoreStore
import TabStoreSupport

/// Stored customizations kept in memory, keyed by app and user as bytes, bounded by bytes: a read that hits
/// answers without SQLite. Users without a customization are kept too (as nil), so reading one costs no
/// query either.
///
/// It never serves a revision older than the last acknowledged write of that user on this server: the
/// writer replaces the entry on its own thread right after the commit, before any caller of the batch is
/// answered (`WriteQueue`'s `afterCommit`), and a read that began before a write cannot put back what it
/// read (`ByteBoundedCache`'s tickets).
///
/// The hook for other writers of the same database (replicas of a shared database): `invalidate` and
/// `removeApp`, called when a change notification arrives, drop what another process changed.
package final class RecordCache: Sendable {
    private let cache: ByteBoundedCache<CustomizationRecord?>

    package init(budget: Int) {
        cache = ByteBoundedCache(budget: budget)
    }

    static func key(appId: String, userId: String) -> ByteKey { ByteKey(appId, userId) }

    /// What one entry costs: the document, the ids (in the key and in the record), the timestamp, and the
    /// bookkeeping around them (dictionary slot, arrays, record).
    static func cost(_ key: ByteKey, _ record: CustomizationRecord?) -> Int {
        160 + key.bytes.count + (record.map { $0.document.count + $0.appId.utf8.count + $0.userId.utf8.count + $0.updatedAt.utf8.count } ?? 0)
    }

    /// The kept record (`.some(nil)`: known to have none), or nil when nothing is kept.
    func value(_ key: ByteKey) -> CustomizationRecord?? { cache.value(key) }

    func ticket(for key: ByteKey) -> ByteBoundedCache<CustomizationRecord?>.Ticket { cache.ticket(for: key) }

    /// What a read found, kept unless a write to the same shard came after `ticket`.
    func fill(_ key: ByteKey, _ record: CustomizationRecord?, ticket: ByteBoundedCache<CustomizationRecord?>.Ticket) {
        cache.fill(key, record, cost: Self.cost(key, record), ticket: ticket)
    }

    /// What a committed write stored (nil: it removed the user's customization).
    func set(appId: String, userId: String, _ record: CustomizationRecord?) {
        let key = Self.key(appId: appId, userId: userId)
        cache.set(key, record, cost: Self.cost(key, record))
    }

    /// Forgets one user's entry: another process changed it.
    package func invalidate(appId: String, userId: String) {
        cache.remove(Self.key(appId: appId, userId: userId))
    }

    /// Forgets every user of an app (deleted here or elsewhere).
    package func removeApp(_ appId: String) {
        cache.removeAll { $0.hasFirstPart(appId) }
    }

    package var statistics: CacheStatistics { cache.statistics }
}
