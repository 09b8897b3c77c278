/// The idempotent answers a user's history rows hold (migration 8), as the user's customization row lists them:
/// one entry per answer, newest first, each the answer key's 32-bit FNV-1a hash and when the answer was made.
///
/// Why: a keyed write that makes a revision appends a history row anyway, to the last page of the history that
/// every write of a batch shares. Its answer (the key, the request's digest, the status and ETag; the body is
/// that row's document, or empty) goes in the same row instead of a row of its own in `idempotent_answers`,
/// whose B-tree is clustered by user: there each answer dirtied a page of its own, written to the WAL and
/// copied again by the checkpoint. The list says, without reading any history row, that a key is new (no entry
/// with its hash): only a repeat, or a hash collision, walks the chain to compare the key's bytes.
///
/// The list holds every live answer of the user's history rows (it may also hold expired ones, and entries of
/// rows a collision shares); an answer leaves it when it expires or when the retention cuts its row, which
/// then moves the answer (still live) to `idempotent_answers`. At most `capacity` entries: past that, answers
/// go to `idempotent_answers` as before, so the customization row stays small.
struct HistoryAnswers: Equatable {
    struct Entry: Equatable {
        let hash: UInt32
        /// Seconds since 1970, clamped to 0...UInt32.max.
        let createdAt: UInt32
    }

    /// Newest first.
    private(set) var entries: [Entry]

    /// Answers a history row holds at most per user (8 bytes each in the customization row).
    static let capacity = 32

    /// The list as stored; bytes past the last whole entry (a row no build wrote) are ignored.
    init(_ stored: [UInt8]) {
        var entries: [Entry] = []
        var index = 0
        while index + 8 <= stored.count {
            entries.append(Entry(hash: Self.uint32(stored, at: index), createdAt: Self.uint32(stored, at: index + 4)))
            index += 8
        }
        self.entries = entries
    }

    init() { entries = [] }

    /// The stored form: nil when empty (a NULL column).
    var stored: [UInt8]? {
        guard !entries.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 8)
        for entry in entries {
            for value in [entry.hash, entry.createdAt] {
                withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
            }
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

    /// Whether a live answer (made at or after `notBefore`) under `key` may be in a history row.
    func mayHold(_ key: String, notBefore: Int) -> Bool {
        let hash = Self.hash(key.utf8)
        return entries.contains { $0.hash == hash && Int($0.createdAt) >= notBefore }
    }

    /// Drops the entries of answers made before `before` (expired: never replayed, never moved).
    mutating func removeExpired(before: Int) {
        entries.removeAll { Int($0.createdAt) < before }
    }

    mutating func add(key: String, createdAt: Int) {
        entries.insert(Entry(hash: Self.hash(key.utf8), createdAt: Self.seconds(createdAt)), at: 0)
    }

    /// Drops one entry for the answer under `key` made at `createdAt` (its row is cut, or the answer moved).
    mutating func remove(key: [UInt8], createdAt: Int) {
        let entry = Entry(hash: Self.hash(key), createdAt: Self.seconds(createdAt))
        if let index = entries.lastIndex(of: entry) { entries.remove(at: index) }
    }

    private static func uint32(_ bytes: [UInt8], at index: Int) -> UInt32 {
        bytes[index..<index + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
