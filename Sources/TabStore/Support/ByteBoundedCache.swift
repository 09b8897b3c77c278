/// A key made of bytes, hashed and compared as bytes (never as a `String`, whose `==` and hash follow
/// Unicode canonical equivalence: two spellings of one name must stay two keys). Its hash is computed once,
/// when the key is made, with the process's seeded hasher over every byte; a cache then picks the shard and
/// the dictionary bucket from that one value instead of hashing the bytes twice (a token key is a few hundred
/// bytes).
package struct ByteKey: Hashable, Sendable {
    package let bytes: [UInt8]
    /// `Hasher` over `bytes` (seeded per process, so a client cannot choose colliding keys).
    fileprivate let digest: Int

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        digest = hasher.finalize()
    }

    /// `parts` joined by 0xFF, a byte no UTF-8 text contains, so ("ab", "c") and ("a", "bc") differ.
    package init(_ parts: String...) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(parts.reduce(parts.count) { $0 + $1.utf8.count })
        for (index, part) in parts.enumerated() {
            if index > 0 { bytes.append(0xFF) }
            bytes.append(contentsOf: part.utf8)
        }
        self.init(bytes)
    }

    /// Whether the key starts with `part` followed by the separator (the first of the parts it was made of).
    package func hasFirstPart(_ part: String) -> Bool {
        let count = part.utf8.count
        guard bytes.count > count, bytes[count] == 0xFF else { return false }
        return bytes[..<count].elementsEqual(part.utf8)
    }

    /// The digest first: keys that differ almost always differ there, so their bytes are rarely walked.
    package static func == (lhs: ByteKey, rhs: ByteKey) -> Bool { lhs.digest == rhs.digest && lhs.bytes == rhs.bytes }

    package func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    /// The shard of `count` this key belongs to (from the digest, so a cache hashes no byte again).
    package func shard(of count: Int) -> Int { Int(UInt(bitPattern: digest) % UInt(count)) }
}

/// A cache bounded by the bytes its values hold (as the caller counts them), split into shards that each
/// have their own lock, so event-loop threads rarely wait for one another. Eviction is CLOCK (second
/// chance): an entry read since the hand last passed stays for one more round, so hot entries stay
/// without a list to reorder on every hit.
///
/// Admission: a value filled after a miss (`fill`, `put`) into a shard that is full is kept only when its key
/// missed recently before (a doorkeeper of recent misses' digests per shard), so a stream of keys seen once (a
/// hot set far larger than the cache) does not evict, on every miss, entries that are read again. A value a
/// write stores (`set`) is always kept.
///
/// Filling from a slower source races with the writer that changes that source: `ticket(for:)` before
/// reading the source, `fill(_:_:cost:ticket:)` after: the fill is dropped when the key's shard changed
/// in between (`set` or `remove`), so a value read before a write never replaces what the write stored.
package final class ByteBoundedCache<Value: Sendable>: Sendable {
    private struct Slot {
        var key: ByteKey?
        var value: Value?
        var cost: Int
        var referenced: Bool
    }

    private struct Shard {
        var index: [ByteKey: Int] = [:]
        var slots: [Slot] = []
        var free: [Int] = []
        var hand = 0
        var cost = 0
        /// Changed by every `set` and `remove`, checked by `fill`.
        var changes: UInt64 = 0
        var hits = 0
        var misses = 0
        /// Digests of keys refused admission lately (a slot per digest, overwritten): a second miss is admitted.
        var doorkeeper: [Int] = []
        var refused = 0
    }

    /// A shard's change count when a read from the source began.
    package struct Ticket: Sendable {
        fileprivate let changes: UInt64
    }

    private let shards: [Locked<Shard>]
    private let budgetPerShard: Int
    /// The most one entry may cost: a value larger than this is not kept (it would evict a shard's worth).
    package let maxEntryCost: Int

    /// - Parameter budget: bytes for all shards together; 0 keeps nothing.
    package init(budget: Int, shards count: Int = 16) {
        shards = (0..<max(1, count)).map { _ in Locked(Shard()) }
        budgetPerShard = max(0, budget) / max(1, count)
        maxEntryCost = budgetPerShard / 4
    }

    private func shard(_ key: ByteKey) -> Locked<Shard> {
        shards[key.shard(of: shards.count)]
    }

    package func value(_ key: ByteKey) -> Value? {
        value(key, where: { _ in true })
    }

    /// The entry under `key` when `matches` accepts it; one it refuses counts as a miss (and is not marked read).
    package func value(_ key: ByteKey, where matches: (Value) -> Bool) -> Value? {
        shard(key).withLock { shard in
            guard let slot = shard.index[key], let value = shard.slots[slot].value, matches(value) else {
                shard.misses &+= 1
                return nil
            }
            shard.hits &+= 1
            shard.slots[slot].referenced = true
            return value
        }
    }

    package func ticket(for key: ByteKey) -> Ticket {
        shard(key).withLock { Ticket(changes: $0.changes) }
    }

    /// Keeps `value` unless the key's shard changed since `ticket` was taken.
    package func fill(_ key: ByteKey, _ value: Value, cost: Int, ticket: Ticket) {
        shard(key).withLock { shard in
            guard shard.changes == ticket.changes, Self.admits(key, cost: cost, in: &shard, budget: budgetPerShard, maxEntryCost: maxEntryCost)
            else { return }
            Self.store(key, value, cost: cost, in: &shard, budget: budgetPerShard, maxEntryCost: maxEntryCost)
        }
    }

    /// Keeps `value` (the source changed to it), replacing what was kept; fills begun before are dropped.
    package func set(_ key: ByteKey, _ value: Value, cost: Int) {
        shard(key).withLock { shard in
            shard.changes &+= 1
            Self.store(key, value, cost: cost, in: &shard, budget: budgetPerShard, maxEntryCost: maxEntryCost)
        }
    }

    /// Keeps `value` for a key whose value never changes once made (a pure function of the key): no fill
    /// in flight is dropped.
    /// - Parameter always: kept even when the shard is full and the key did not miss lately (a value a write made).
    package func put(_ key: ByteKey, _ value: Value, cost: Int, always: Bool = false) {
        shard(key).withLock { shard in
            guard always || Self.admits(key, cost: cost, in: &shard, budget: budgetPerShard, maxEntryCost: maxEntryCost) else { return }
            Self.store(key, value, cost: cost, in: &shard, budget: budgetPerShard, maxEntryCost: maxEntryCost)
        }
    }

    /// Forgets `key`; fills begun before are dropped.
    package func remove(_ key: ByteKey) {
        shard(key).withLock { shard in
            shard.changes &+= 1
            Self.drop(key, in: &shard)
        }
    }

    /// Forgets every key `matching` says so (a scan of every entry: for rare events such as deleting an app).
    package func removeAll(where matching: (ByteKey) -> Bool) {
        for shard in shards {
            shard.withLock { shard in
                shard.changes &+= 1
                for key in shard.index.keys where matching(key) { Self.drop(key, in: &shard) }
            }
        }
    }

    /// Entries, the bytes they cost, hits and misses, over all shards.
    package var statistics: CacheStatistics {
        shards.reduce(into: CacheStatistics()) { total, shard in
            shard.withLock {
                total.entries += $0.index.count
                total.cost += $0.cost
                total.hits += $0.hits
                total.misses += $0.misses
                total.refused += $0.refused
            }
        }
    }

    /// Whether a value of `cost` may be kept at all (never one over the entry limit or the shard's budget).
    private static func fits(_ cost: Int, budget: Int, maxEntryCost: Int) -> Bool { cost <= maxEntryCost && cost <= budget }

    /// Slots of a shard's doorkeeper: four per entry the shard held when it first filled (at least 1,024, at most
    /// 65,536), so a key's first miss is remembered for several rounds of the shard's entries whatever its size.
    static func doorkeeperSlots(entries: Int) -> Int { min(65_536, max(1_024, 4 * entries)) }

    /// Whether a value filled after a miss is kept: always while the shard has room for it; when it would
    /// evict, only if its key was refused lately too (then its slot is cleared). A value that could never be kept
    /// (over the entry limit, or no budget) is neither counted nor remembered.
    private static func admits(_ key: ByteKey, cost: Int, in shard: inout Shard, budget: Int, maxEntryCost: Int) -> Bool {
        guard fits(cost, budget: budget, maxEntryCost: maxEntryCost) else { return false }
        guard shard.cost + cost > budget, shard.index[key] == nil else { return true }
        if shard.doorkeeper.isEmpty { shard.doorkeeper = Array(repeating: 0, count: doorkeeperSlots(entries: shard.index.count)) }
        let digest = key.digest | 1  // never 0, the empty slot
        let slot = Int(UInt(bitPattern: digest >> 8) % UInt(shard.doorkeeper.count))
        if shard.doorkeeper[slot] == digest {
            shard.doorkeeper[slot] = 0
            return true
        }
        shard.doorkeeper[slot] = digest
        shard.refused &+= 1
        return false
    }

    private static func drop(_ key: ByteKey, in shard: inout Shard) {
        guard let slot = shard.index.removeValue(forKey: key) else { return }
        shard.cost -= shard.slots[slot].cost
        shard.slots[slot] = Slot(key: nil, value: nil, cost: 0, referenced: false)
        shard.free.append(slot)
    }

    private static func store(_ key: ByteKey, _ value: Value, cost: Int, in shard: inout Shard, budget: Int, maxEntryCost: Int) {
        drop(key, in: &shard)
        guard fits(cost, budget: budget, maxEntryCost: maxEntryCost) else { return }
        // The hand goes round giving referenced entries a second chance; it takes at most two rounds.
        while shard.cost + cost > budget, !shard.index.isEmpty {
            if shard.hand >= shard.slots.count { shard.hand = 0 }
            let hand = shard.hand
            shard.hand += 1
            guard let victim = shard.slots[hand].key else { continue }
            if shard.slots[hand].referenced {
                shard.slots[hand].referenced = false
            } else {
                drop(victim, in: &shard)
            }
        }
        let slot = Slot(key: key, value: value, cost: cost, referenced: false)
        if let reused = shard.free.popLast() {
            shard.slots[reused] = slot
            shard.index[key] = reused
        } else {
            shard.index[key] = shard.slots.count
            shard.slots.append(slot)
        }
        shard.cost += cost
    }
}

/// What a cache holds and how often it answered (`/metrics`).
package struct CacheStatistics: Sendable, Equatable {
    package var entries = 0
    /// The bytes its entries cost, as counted against its budget.
    package var cost = 0
    package var hits = 0
    package var misses = 0
    /// Values filled after a miss that a full cache did not keep (their key had not missed lately).
    package var refused = 0

    package init() {}
}
