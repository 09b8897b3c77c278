import CSystem
import Glibc

/// Process-wide memory settings the server makes at start.
package enum ProcessMemory {
    /// Limits glibc's malloc to `count` arenas unless the operator chose with `MALLOC_ARENA_MAX`.
    ///
    /// glibc gives threads that contend for malloc's lock arenas of their own, up to 8 per core. Memory freed
    /// in one arena is reused only by that arena, so with event loops, the writer and the readers filling and
    /// evicting the caches each arena keeps its own free pages: at a million users under load the limit to
    /// 2 arenas measured 12 MB less resident memory (124 → 111 MB) at the same requests per second
    /// (bench/README.md "Memory").
    /// - Returns: the limit applied, or nil when `MALLOC_ARENA_MAX` is set or malloc refused.
    @discardableResult
    package static func limitMallocArenas(to count: Int) -> Int? {
        guard getenv("MALLOC_ARENA_MAX") == nil else { return nil }
        let limit = Int32(clamping: max(1, count))
        return tabstore_limit_malloc_arenas(limit) == 1 ? Int(limit) : nil
    }
}
