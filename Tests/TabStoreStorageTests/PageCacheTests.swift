import Foundation
import Testing
@testable import TabStoreStorage
@testable import TabStoreStore
import TabStoreTestSupport

@Suite("Page cache layer: a truncation is skipped only when no page can be at or past its limit")
struct PageCacheTests {
    private static let parking: UInt32 = 0x4000_0000 / 4096 + 1

    @Test("the B-tree's parking of a page at the lock-byte number does not make the next commit walk the cache")
    func parkedPageDoesNotRaiseTheBound() {
        var pages = PageNumbers(pageSize: 4096)
        #expect(pages.parkingKey == Self.parking)
        for key in UInt32(1)...100 { pages.fetched(key) }
        // balance_nonroot swapping pages 50 and 60 through the parking number.
        pages.rekeyed(from: 50, to: Self.parking)
        #expect(pages.mayHold(atOrPast: 101))  // the parked page is past the end until it moves back
        pages.rekeyed(from: 60, to: 50)
        pages.rekeyed(from: Self.parking, to: 60)
        #expect(!pages.mayHold(atOrPast: 101))
        #expect(pages.mayHold(atOrPast: 100))
        pages.truncated(40)
        #expect(!pages.mayHold(atOrPast: 40) && pages.mayHold(atOrPast: 39))
    }

    @Test("randomized against the set of page numbers a cache holds: a page at or past the limit is never missed")
    func neverMissesAPage() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var pages = PageNumbers(pageSize: 4096)
            var held = Set<UInt32>()
            for _ in 0..<400 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:  // a page fetched (or created)
                    let key = UInt32.random(in: 1...300, using: &generator)
                    held.insert(key)
                    pages.fetched(key)
                case 4..<6:  // a page renumbered to a free number, often through the parking number
                    guard let old = held.randomElement(using: &generator) else { continue }
                    let new =
                        Bool.random(using: &generator) && !held.contains(Self.parking) ? Self.parking : UInt32.random(in: 1...300, using: &generator)
                    guard !held.contains(new) else { continue }
                    held.remove(old)
                    held.insert(new)
                    pages.rekeyed(from: old, to: new)
                case 6:  // evicted or discarded: the layer is not told
                    if let key = held.randomElement(using: &generator) { held.remove(key) }
                default:  // truncation at a limit
                    let limit = UInt32.random(in: 0...320, using: &generator)
                    let mustDrop = held.contains { $0 >= limit }
                    #expect(!mustDrop || pages.mayHold(atOrPast: limit), "held \(held.sorted()) limit \(limit) state \(pages)")
                    if pages.mayHold(atOrPast: limit) {
                        held = held.filter { $0 < limit }
                        pages.truncated(limit)
                    }
                }
            }
        }
    }

    @Test("a real database through the layer: splits in the middle of a B-tree, transactions that grow the file and roll back, integrity kept")
    func sqliteThroughTheLayer() throws {
        let directory = TemporaryDirectory()
        let db = try SQLiteConnection(path: directory.file("pages.sqlite"))
        #expect(PageCache.installed)
        let skippedBefore = PageCache.skipped.load(ordering: .relaxed)
        try db.execute("CREATE TABLE t (k TEXT PRIMARY KEY NOT NULL, v BLOB NOT NULL) WITHOUT ROWID")
        var kept = Set<String>()
        var generator = SystemRandomNumberGenerator()
        for round in 0..<120 {
            let rollBack = round % 5 == 4
            var added: [String] = []
            try db.execute("BEGIN IMMEDIATE")
            // Random keys: every insert lands in the middle of the tree, so pages split and get renumbered.
            for _ in 0..<(rollBack ? 400 : 60) {
                let key = String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 36)
                try db.run("INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", [.text(key), .blob(Array(repeating: UInt8(round & 0xFF), count: 300))])
                added.append(key)
            }
            if rollBack {
                try db.execute("ROLLBACK")  // the file's image shrinks back; its pages past the end leave the cache
            } else {
                try db.execute("COMMIT")
                kept.formUnion(added)
            }
        }
        // Truncations were skipped (each checked in this debug build: SQLite's cache, truncated anyway, dropped nothing).
        #expect(PageCache.skipped.load(ordering: .relaxed) > skippedBefore)
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
        #expect(try db.scalarInt("SELECT count(*) FROM t") == kept.count)
        let reader = try SQLiteConnection(path: directory.file("pages.sqlite"))
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == kept.count)
        for key in kept.prefix(50) {
            #expect(try reader.scalarInt("SELECT length(v) FROM t WHERE k = ?", [.text(key)]) == 300)
        }
    }
}
