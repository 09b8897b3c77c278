import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
@testable import TabStoreAPI
@testable import TabStoreAuth
import TabStoreTestSupport

@Suite("Caches bounded by bytes")
struct CacheTests {
    @Test("keys are bytes: canonically equivalent spellings and shifted separators are different keys")
    func byteKeys() {
        let cache = ByteBoundedCache<Int>(budget: 1 << 20, shards: 4)
        cache.set(ByteKey("app", "caf\u{E9}"), 1, cost: 10)
        cache.set(ByteKey("app", "cafe\u{301}"), 2, cost: 10)
        cache.set(ByteKey("ab", "c"), 3, cost: 10)
        cache.set(ByteKey("a", "bc"), 4, cost: 10)
        #expect(cache.value(ByteKey("app", "caf\u{E9}")) == 1)
        #expect(cache.value(ByteKey("app", "cafe\u{301}")) == 2)
        #expect(cache.value(ByteKey("ab", "c")) == 3)
        #expect(cache.value(ByteKey("a", "bc")) == 4)
        #expect(ByteKey("app", "u").hasFirstPart("app"))
        #expect(!ByteKey("apple", "u").hasFirstPart("app"))
        #expect(!ByteKey("app", "u").hasFirstPart("ap"))
    }

    @Test("what it keeps never costs more than its budget, and an entry over a quarter of a shard is not kept")
    func bounded() {
        let cache = ByteBoundedCache<[UInt8]>(budget: 4_000, shards: 1)
        for index in 0..<1_000 {
            cache.set(ByteKey("app", "user-\(index)"), Array(repeating: 1, count: 100), cost: 100)
            #expect(cache.statistics.cost <= 4_000)
        }
        #expect(cache.statistics.entries == 40)
        cache.set(ByteKey("app", "big"), [], cost: 1_001)
        #expect(cache.value(ByteKey("app", "big")) == nil)
        #expect(cache.statistics.cost <= 4_000)
    }

    @Test("eviction gives an entry read since the hand passed a second chance (CLOCK)")
    func secondChance() {
        let cache = ByteBoundedCache<Int>(budget: 400, shards: 1)
        for index in 0..<4 { cache.set(ByteKey("k\(index)"), index, cost: 100) }
        #expect(cache.value(ByteKey("k0")) == 0)  // referenced: survives the next eviction
        cache.set(ByteKey("k4"), 4, cost: 100)
        #expect(cache.value(ByteKey("k0")) == 0)
        #expect(cache.value(ByteKey("k1")) == nil)
        #expect(cache.value(ByteKey("k4")) == 4)
    }

    @Test("a full cache keeps a value read after a miss only when its key missed lately too; a written value always")
    func admission() {
        let cache = ByteBoundedCache<Int>(budget: 400, shards: 1)
        for index in 0..<4 { cache.put(ByteKey("k\(index)"), index, cost: 100) }  // room: each kept at once
        #expect(cache.statistics.entries == 4)
        cache.put(ByteKey("once"), 9, cost: 100)  // full, and the key never missed before: not kept, nothing evicted
        #expect(cache.value(ByteKey("once")) == nil)
        for index in 0..<4 { #expect(cache.value(ByteKey("k\(index)")) == index) }
        #expect(cache.statistics.refused == 1)
        cache.put(ByteKey("once"), 9, cost: 100)  // its second miss: kept, one entry evicted for it
        #expect(cache.value(ByteKey("once")) == 9)
        #expect(cache.statistics.entries == 4)
        let key = ByteKey("filled")
        cache.fill(key, 7, cost: 100, ticket: cache.ticket(for: key))
        #expect(cache.value(key) == nil)
        cache.fill(key, 7, cost: 100, ticket: cache.ticket(for: key))
        #expect(cache.value(key) == 7)
        cache.set(ByteKey("written"), 5, cost: 100)  // a write's value: kept at once
        #expect(cache.value(ByteKey("written")) == 5)
        cache.put(ByteKey("made by a write"), 6, cost: 100, always: true)
        #expect(cache.value(ByteKey("made by a write")) == 6)
        cache.put(ByteKey("too large"), 7, cost: 101)  // over a quarter of the shard: never kept, not counted as refused
        #expect(cache.statistics.cost <= 400)
        #expect(cache.statistics.refused == 2)
        #expect(ByteBoundedCache<Int>.doorkeeperSlots(entries: 10) == 1_024 && ByteBoundedCache<Int>.doorkeeperSlots(entries: 5_000) == 20_000)
    }

    @Test("a fill that began before a write is dropped; one that began after it is kept")
    func ticketsOrderFillsAfterWrites() {
        let cache = ByteBoundedCache<Int>(budget: 1 << 20, shards: 1)
        let key = ByteKey("app", "alice")
        let early = cache.ticket(for: key)  // a reader starts, reads revision 1 from the source ...
        cache.set(key, 2, cost: 10)  // ... the writer commits revision 2 and stores it ...
        cache.fill(key, 1, cost: 10, ticket: early)  // ... the reader's late fill must not put 1 back
        #expect(cache.value(key) == 2)
        cache.remove(key)
        cache.fill(key, 2, cost: 10, ticket: early)
        #expect(cache.value(key) == nil)
        let late = cache.ticket(for: key)
        cache.fill(key, 2, cost: 10, ticket: late)
        #expect(cache.value(key) == 2)
    }

    @Test("removeAll drops exactly the keys it matches, in every shard")
    func removeApp() {
        let cache = ByteBoundedCache<Int>(budget: 1 << 20, shards: 8)
        for index in 0..<100 {
            cache.set(ByteKey("one", "u\(index)"), index, cost: 10)
            cache.set(ByteKey("one.more", "u\(index)"), index, cost: 10)
        }
        cache.removeAll { $0.hasFirstPart("one") }
        #expect(cache.statistics.entries == 100)
        #expect(cache.value(ByteKey("one", "u7")) == nil)
        #expect(cache.value(ByteKey("one.more", "u7")) == 7)
        #expect(cache.statistics.cost == 1_000)
    }

    @Test("a budget of 0 keeps nothing")
    func disabled() {
        let cache = ByteBoundedCache<Int>(budget: 0)
        cache.set(ByteKey("a", "b"), 1, cost: 1)
        #expect(cache.value(ByteKey("a", "b")) == nil)
    }
}

@Suite("The store's record cache")
struct RecordCacheTests {
    func openStore(_ dir: TemporaryDirectory, cacheBytes: Int = 1 << 20) throws -> SQLiteStore {
        var configuration = SQLiteStore.Configuration(path: dir.file("tabstore.sqlite"))
        configuration.recordCacheBytes = cacheBytes
        return try SQLiteStore(configuration: configuration)
    }

    func commit(_ store: SQLiteStore, _ appId: String, _ userId: String, revision: Int) async throws {
        let record = CustomizationRecord(appId: appId, userId: userId, revision: revision, schemaVersion: 1,
                                         document: Array("{\"revision\":\(revision)}".utf8), updatedAt: "t")
        try await store.commitCustomization(CustomizationCommit(appId: appId, userId: userId, expectedRevision: revision - 1,
                                                                record: record, change: .put, historyRevisions: 0))
    }

    @Test("a second read is answered from memory; a user without a customization is remembered too")
    func hits() async throws {
        let dir = TemporaryDirectory()
        let store = try openStore(dir)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await commit(store, "app", "alice", revision: 1)
        let before = store.records.statistics
        #expect(try await store.customization(appId: "app", userId: "alice")?.revision == 1)
        #expect(try store.customizationNow(appId: "app", userId: "alice")?.revision == 1)
        #expect(try await store.customization(appId: "app", userId: "nobody") == nil)
        #expect(try store.customizationNow(appId: "app", userId: "nobody") == nil)
        let after = store.records.statistics
        #expect(after.hits - before.hits == 3)  // the commit stored alice's record: every read of her hits
        #expect(after.misses - before.misses == 1)  // only the first read of nobody goes to the file
        await store.close()
    }

    @Test("no read after an acknowledged write returns an older revision, with readers racing the writer")
    func readsNeverGoBack() async throws {
        let dir = TemporaryDirectory()
        let store = try openStore(dir, cacheBytes: 64 << 10)  // small: entries come and go while this runs
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        let users = (0..<8).map { "user-\($0)" }
        let acknowledged = Locked([String: Int]())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in users {
                group.addTask {
                    for revision in 1...60 {
                        try await commit(store, "app", user, revision: revision)
                        acknowledged.withLock { $0[user] = revision }
                        // Right after the acknowledgement, from both read paths.
                        #expect(try await store.customization(appId: "app", userId: user)?.revision == revision)
                        do {
                            #expect(try store.customizationNow(appId: "app", userId: user)?.revision == revision)
                        } catch is ReadersBusy {}  // every reader busy: nothing read, nothing to check
                    }
                }
                group.addTask {
                    for _ in 0..<300 {
                        let floor = acknowledged.withLock { $0[user] ?? 0 }
                        let read = try await store.customization(appId: "app", userId: user)?.revision ?? 0
                        #expect(read >= floor)
                    }
                }
            }
            try await group.waitForAll()
        }
        await store.close()
    }

    @Test("erasing a user and deleting an app reach the cache: a recreated app's user starts empty")
    func eraseAndDeleteApp() async throws {
        let dir = TemporaryDirectory()
        let store = try openStore(dir)
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        try await commit(store, "app", "alice", revision: 1)
        try await commit(store, "app", "bob", revision: 1)
        #expect(try await store.customization(appId: "app", userId: "alice") != nil)
        #expect(try await store.eraseUser(userId: "alice", appId: "app"))
        #expect(try await store.customization(appId: "app", userId: "alice") == nil)
        #expect(try await store.customization(appId: "app", userId: "bob")?.revision == 1)
        #expect(try await store.deleteApp("app"))
        _ = try await store.createApp(id: "app", name: "Again", signingSecret: "s2", createdAt: "t")
        #expect(try await store.customization(appId: "app", userId: "bob") == nil)
        #expect(try store.customizationNow(appId: "app", userId: "bob") == nil)
        await store.close()
    }
}

@Suite("The verified-token cache")
struct TokenCacheTests {
    @Test("bounded by bytes: thousands of tokens never hold more than the budget; once full, a token verified again is kept")
    func bounded() {
        let cache = TabStoreAuth.TokenCache(budget: 64 << 10)
        func token(_ index: Int) -> String { "header.payload-\(index)-" + String(repeating: "x", count: 150) + ".signature" }
        func entry(_ index: Int) -> TabStoreAuth.TokenCache.Entry {
            .init(appId: "app", audience: ["app"], userId: Identifier("user-\(index)"), secret: "s", expiresAt: 1, notBefore: nil)
        }
        for index in 0..<5_000 {
            cache.store(token(index), entry(index))
            #expect(cache.statistics.cost <= 64 << 10)
        }
        #expect(cache.statistics.entries > 50)
        #expect(cache.lookup(token(0))?.userId == Identifier("user-0"))  // kept while the cache had room
        // Full: a token seen once did not push out the tokens in use; verified a second time, it is kept.
        #expect(cache.lookup(token(4_999)) == nil)
        cache.store(token(4_999), entry(4_999))
        #expect(cache.lookup(token(4_999))?.userId == Identifier("user-4999"))
        #expect(cache.statistics.cost <= 64 << 10)
    }
}

@Suite("WAL checkpoints off the writer")
struct CheckpointerTests {
    @Test("the writer never checkpoints in its commits; the checkpointer copies every committed page soon after")
    func checkpointsInTheBackground() async throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteStore(configuration: SQLiteStore.Configuration(path: dir.file("tabstore.sqlite")))
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        for revision in 1...200 {
            let record = CustomizationRecord(appId: "app", userId: "user-\(revision)", revision: 1, schemaVersion: 1,
                                             document: Array(repeating: UInt8(ascii: "x"), count: 2_000), updatedAt: "t")
            try await store.commitCustomization(CustomizationCommit(appId: "app", userId: "user-\(revision)", expectedRevision: 0,
                                                                    record: record, change: .put, historyRevisions: 0))
        }
        // The database file alone (copied without its WAL) holds every row once the checkpointer ran; nobody
        // else checkpoints (the writer's automatic checkpoint is off).
        var copied = false
        for attempt in 0..<100 where !copied {
            let snapshot = dir.file("snapshot-\(attempt).sqlite")
            try FileManager.default.copyItem(atPath: dir.file("tabstore.sqlite"), toPath: snapshot)
            // Before the first checkpoint the file may not even hold the tables yet: not copied.
            let probe = try? SQLiteConnection(path: snapshot, options: { var o = SQLiteConnection.Options(); o.readOnly = true; return o }())
            copied = (try? probe?.scalarInt("SELECT count(*) FROM customizations")) == 200
            if !copied { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(copied)
        await store.close()
    }

    /// The WAL header's checkpoint sequence number (bytes 12-15, big-endian): SQLite adds one each time the log
    /// starts over from the beginning of the file (https://www.sqlite.org/fileformat.html#wal_file_format).
    static func walRestarts(_ path: String) -> UInt32? {
        guard let handle = FileHandle(forReadingAtPath: path), let header = try? handle.read(upToCount: 32), header.count == 32 else { return nil }
        try? handle.close()
        return header[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }

    @Test("under writes that never pause the WAL still starts over from the beginning of the file, again and again")
    func walStartsOverUnderSustainedWrites() async throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteStore(configuration: SQLiteStore.Configuration(path: dir.file("tabstore.sqlite")))
        _ = try await store.createApp(id: "app", name: "App", signingSecret: "s", createdAt: "t")
        let wal = dir.file("tabstore.sqlite-wal")
        // 64 writers at once, each write a new 3 KB row (a page or more of WAL each), until the log has started
        // over twice (or 30 s: without the restart it only starts over when the writes pause, which they never do).
        let deadline = ContinuousClock.now + .seconds(30)
        let restarted = Locked(false)
        let first = Self.walRestarts(wal)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<64 {
                group.addTask {
                    var index = lane
                    while !restarted.withLock({ $0 }) && ContinuousClock.now < deadline {
                        let record = CustomizationRecord(appId: "app", userId: "user-\(index)", revision: 1, schemaVersion: 1,
                                                         document: Array(repeating: UInt8(ascii: "x"), count: 3_000), updatedAt: "t")
                        try await store.commitCustomization(CustomizationCommit(appId: "app", userId: "user-\(index)", expectedRevision: 0,
                                                                                record: record, change: .put, historyRevisions: 0))
                        index += 64
                    }
                }
            }
            group.addTask {
                while ContinuousClock.now < deadline {
                    if let now = Self.walRestarts(wal), let first, now >= first &+ 2 { restarted.withLock { $0 = true }; return }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await group.waitForAll()
        }
        #expect(restarted.withLock { $0 }, "the WAL never started over while the writes went on (\(Self.walRestarts(wal) ?? 0) restarts)")
        await store.close()
    }
}
