import TabStoreStore
import CSQLite
import Synchronization

/// SQLite's own page cache behind a thin layer that skips one needless full scan of it.
///
/// At the end of every write transaction SQLite drops from the connection's page cache the pages past the
/// database's end (`xTruncate`). Its cache does that cheaply when the highest page number it has ever held is
/// close to that end, and by walking its whole hash table (every page in the cache) otherwise. The B-tree's
/// rebalancing, which keeps the pages of a split in file order, parks a page for a moment at the number of the
/// never-used lock-byte page (`PENDING_BYTE / page size + 1`, page 262,145 with 4 KiB pages), so after any write
/// that split a page in the middle of a B-tree (an idempotent answer or a new user's row: every few writes)
/// the commit walked all of the writer's cache (16 MiB, 4,096 pages): about 3 µs of CPU per keyed PATCH
/// (perf, bench/results/issue15.md).
///
/// This layer keeps, for each cache, a bound every page number in it is at or below (apart from a page parked
/// at the lock-byte number, tracked on its own) and passes a truncation on only when some page may be at or
/// past the limit, that is when it may have something to drop. Everything else goes straight to SQLite's
/// cache; when SQLite is already initialized (it then refuses a new page cache) its own stays, only slower.
package enum PageCache {
    /// Installs the layer, once: `tab-server` touches this first thing (`Commands.prepareProcess`), before any
    /// thread can use SQLite (`sqlite3_config` must not run beside any other SQLite call), and every connection
    /// touches it before it opens, so a program that never called the former still gets the layer before its
    /// first connection. False when SQLite was already initialized (it then keeps its own cache).
    package static let installed: Bool = {
        // Both structs live on the heap, allocated by Swift for the C layout: SQLite reads and writes them whole.
        let methods = PageCache.inner
        guard tabstore_sqlite_config_getpcache2(methods) == SQLITE_OK, methods.pointee.xCreate != nil, methods.pointee.xFetch != nil,
              methods.pointee.xRekey != nil, methods.pointee.xTruncate != nil, methods.pointee.xDestroy != nil else { return false }
        let wrapped = UnsafeMutablePointer<sqlite3_pcache_methods2>.allocate(capacity: 1)
        defer { wrapped.deallocate() }  // SQLite keeps its own copy
        wrapped.initialize(to: sqlite3_pcache_methods2(
            iVersion: methods.pointee.iVersion, pArg: nil,
            xInit: { _ in PageCache.inner.pointee.xInit?(PageCache.inner.pointee.pArg) ?? SQLITE_OK },
            xShutdown: { _ in PageCache.inner.pointee.xShutdown?(PageCache.inner.pointee.pArg) },
            xCreate: { pageSize, extra, purgeable in
                guard let cache = PageCache.inner.pointee.xCreate?(pageSize, extra, purgeable) else { return nil }
                let layer = UnsafeMutablePointer<Layer>.allocate(capacity: 1)
                layer.initialize(to: Layer(inner: cache, pages: PageNumbers(pageSize: pageSize)))
                return OpaquePointer(layer)
            },
            xCachesize: { cache, size in PageCache.inner.pointee.xCachesize?(PageCache.unwrap(cache).pointee.inner, size) },
            xPagecount: { cache in PageCache.inner.pointee.xPagecount?(PageCache.unwrap(cache).pointee.inner) ?? 0 },
            xFetch: { cache, key, create in
                let layer = PageCache.unwrap(cache)
                let page = PageCache.inner.pointee.xFetch?(layer.pointee.inner, key, create)
                if page != nil { layer.pointee.pages.fetched(key) }
                return page
            },
            xUnpin: { cache, page, discard in PageCache.inner.pointee.xUnpin?(PageCache.unwrap(cache).pointee.inner, page, discard) },
            xRekey: { cache, page, old, new in
                let layer = PageCache.unwrap(cache)
                PageCache.inner.pointee.xRekey?(layer.pointee.inner, page, old, new)
                layer.pointee.pages.rekeyed(from: old, to: new)
            },
            xTruncate: { cache, limit in
                let layer = PageCache.unwrap(cache)
                // No page at or past `limit`: the truncation would drop nothing (and might walk the whole cache).
                guard layer.pointee.pages.mayHold(atOrPast: limit) else {
                    PageCache.skipped.add(1, ordering: .relaxed)
                    #if DEBUG
                    // Debug builds (the tests) check every skip: SQLite's cache, truncated anyway, drops nothing.
                    let held = PageCache.inner.pointee.xPagecount?(layer.pointee.inner)
                    PageCache.inner.pointee.xTruncate?(layer.pointee.inner, limit)
                            precondition(
                                PageCache.inner.pointee.xPagecount?(layer.pointee.inner) == held,
                                "page cache layer skipped a truncation at \(limit) that drops pages")
                    #endif
                    return
                }
                PageCache.inner.pointee.xTruncate?(layer.pointee.inner, limit)
                layer.pointee.pages.truncated(limit)
            },
            xDestroy: { cache in
                let layer = PageCache.unwrap(cache)
                PageCache.inner.pointee.xDestroy?(layer.pointee.inner)
                layer.deinitialize(count: 1)
                layer.deallocate()
            },
            xShrink: { cache in PageCache.inner.pointee.xShrink?(PageCache.unwrap(cache).pointee.inner) }))
        return tabstore_sqlite_config_pcache2(wrapped) == SQLITE_OK
    }()

    /// SQLite's default page cache, filled once inside the one-time initializer of `installed`, before the layer
    /// is handed to SQLite, and never written again; every read comes from a method of the layer, so after that
    /// initializer finished (Swift runs it once, and every caller waits for it).
    nonisolated(unsafe) private static let inner: UnsafeMutablePointer<sqlite3_pcache_methods2> = {
        let methods = UnsafeMutablePointer<sqlite3_pcache_methods2>.allocate(capacity: 1)
        methods.initialize(to: sqlite3_pcache_methods2())
        return methods
    }()

    /// Truncations the layer did not pass on (tests check the layer is in use).
    package static let skipped = Atomic<Int>(0)

    /// One cache of the layer: SQLite's cache, and what page numbers it may hold. Used by one connection at a
    /// time, like the cache itself (SQLite calls a cache's methods only for the connection that owns it).
    private struct Layer {
        let inner: OpaquePointer
        var pages: PageNumbers
    }

    private static func unwrap(_ cache: OpaquePointer?) -> UnsafeMutablePointer<Layer> {
        UnsafeMutablePointer<Layer>(cache!)  // SQLite passes back only what xCreate returned
    }
}

/// What page numbers one page cache may hold: a bound every number in it is at or below, except the lock-byte
/// page's number (where B-tree rebalancing parks a page while it renumbers the pages of a split; no database
/// page ever has it), tracked on its own so the bound does not jump past the database's end.
struct PageNumbers: Equatable {
    /// Every page number in the cache is at or below this, except `parkingKey` while `parked`.
    private(set) var bound: UInt32 = 0
    let parkingKey: UInt32
    private(set) var parked = false

    /// For a cache of `pageSize`-byte pages; SQLite's lock byte is at 1 GiB (`PENDING_BYTE`).
    init(pageSize: Int32) {
        parkingKey = pageSize > 0 ? UInt32(0x4000_0000 / pageSize) + 1 : 0
    }

    /// The cache gave out (or made) the page `key`.
    mutating func fetched(_ key: UInt32) {
        if key == parkingKey {
            parked = true
        } else if key > bound {
            bound = key
        }
    }

    /// A page's number changed from `old` to `new` (no other page has `new` any more).
    mutating func rekeyed(from old: UInt32, to new: UInt32) {
        if old == parkingKey { parked = false }
        fetched(new)
    }

    /// Whether a page numbered `limit` or higher may be in the cache.
    func mayHold(atOrPast limit: UInt32) -> Bool {
        bound >= limit || (parked && parkingKey >= limit)
    }

    /// The cache dropped every page numbered `limit` or higher.
    mutating func truncated(_ limit: UInt32) {
        bound = limit == 0 ? 0 : min(bound, limit - 1)
        if parkingKey >= limit { parked = false }
    }
}
