import TabStoreStore
/// The idempotent answers a user's history rows hold (migration 8), as the user's customization row lists them:
/// one entry per answer, newest first: the answer key's 32-bit FNV-1a hash, when the answer was made, and the
/// rowid of the history row holding it.
///
/// Why: a keyed write that makes a revision appends a history row anyway, to the last page of the history that
/// every write of a batch shares. Its answer (the key, the request's digest, the status and ETag; the body is
/// that row's document, or empty) goes in the same row instead of a row of its own in `idempotent_answers`,
/// whose B-tree is clustered by user: there each answer dirtied a page of its own, written to the WAL and
/// copied again by the checkpoint. The list says, without reading any history row, that a key is new (no entry
/// with its hash); a repeat, or a hash collision, reads the rows its entries name (by rowid, never a walk of
/// the chain) and compares the key's bytes, the row's app and user, and its time.
///
/// The list holds every live answer of the user's history rows (it may also hold expired ones, and entries
/// whose row no longer holds a live answer: the cap's eviction drops those); an answer leaves it when it
/// expires, when the cap evicts it, or when the retention cuts its row, which then moves the answer (still
/// live) to `idempotent_answers`. At most
/// `capacity` entries: past that, answers go to `idempotent_answers` as before, so the customization row stays
/// small (16 bytes an entry).
struct HistoryAnswers: Equatable {
    struct Entry: Equatable {
        let hash: UInt32
        /// Seconds since 1970, clamped to 0...UInt32.max.
        let createdAt: UInt32
        let rowid: Int64
    }

    /// Newest first.
    private(set) var entries: [Entry]

    /// Answers history rows hold at most per user.
    static let capacity = 32
    private static let entryBytes = 16

    /// The list as stored; bytes past the last whole entry (a row no build wrote) are ignored.
    init(_ stored: [UInt8]) {
        var entries: [Entry] = []
        var index = 0
        while index + Self.entryBytes <= stored.count {
            let rowid = UInt64(Self.uint32(stored, at: index + 8)) << 32 | UInt64(Self.uint32(stored, at: index + 12))
            entries.append(Entry(hash: Self.uint32(stored, at: index), createdAt: Self.uint32(stored, at: index + 4),
                                 rowid: Int64(bitPattern: rowid)))
            index += Self.entryBytes
        }
        self.entries = entries
    }

    init() { entries = [] }

    /// The stored form: nil when empty (a NULL column).
    var stored: [UInt8]? {
        guard !entries.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * Self.entryBytes)
        for entry in entries {
            withUnsafeBytes(of: entry.hash.bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: entry.createdAt.bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: entry.rowid.bigEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    var count: Int { entries.count }

    /// 32-bit FNV-1a over the key's bytes: stable across processes (it is stored), and only a filter (a hit is
    /// confirmed by comparing the key's bytes).
    static func hash(_ key: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in key {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    static func seconds(_ time: Int) -> UInt32 { UInt32(clamping: time) }

    /// The rowids of the history rows that may hold a live answer (made at or after `notBefore`) under `key`,
    /// newest first.
    func rows(mayHolding key: String, notBefore: Int) -> [Int] {
        let hash = Self.hash(key.utf8)
        return entries.filter { $0.hash == hash && Int($0.createdAt) >= notBefore }.map { Int($0.rowid) }
    }

    /// Drops the entries of answers made before `before` (expired: never replayed, never moved).
    mutating func removeExpired(before: Int) {
        entries.removeAll { Int($0.createdAt) < before }
    }

    mutating func add(key: String, createdAt: Int, rowid: Int) {
        entries.insert(Entry(hash: Self.hash(key.utf8), createdAt: Self.seconds(createdAt), rowid: Int64(rowid)), at: 0)
    }

    /// Drops the entries naming history row `rowid` (its answer moved or went, or the row is cut).
    mutating func remove(rowid: Int) {
        entries.removeAll { $0.rowid == Int64(rowid) }
    }

    private static func uint32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        bytes[index..<index + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
