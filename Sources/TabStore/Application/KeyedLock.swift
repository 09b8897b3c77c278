import TabStoreSupport
/// Mutual exclusion per key for async callers: writes to one user's customization take turns here, so the
/// decoding, validation and encoding they do happens outside the storage writer yet never races another
/// write of the same user on this server. Keys are compared by their exact bytes (`Identifier`).
///
/// Memory is bounded by the callers in flight: a key exists only while someone holds or waits for it.
package final class KeyedLock<Key: Hashable & Sendable>: Sendable {
    /// Per held key, the callers waiting for it in arrival order; guarded by this lock.
    private let waiters = Locked<[Key: [CheckedContinuation<Void, Never>]]>([:])

    package init() {}

    /// Runs `body` while holding `key`.
    /// - Throws: what `body` throws.
    package func withLock<T: Sendable>(_ key: Key, _ body: () async throws -> T) async throws -> T {
        await acquire(key)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: Key) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = waiters.withLock { waiters -> Bool in
                guard waiters[key] != nil else {
                    waiters[key] = []
                    return true
                }
                waiters[key]!.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the key to the next waiter, or forgets it.
    private func release(_ key: Key) {
        let next = waiters.withLock { waiters -> CheckedContinuation<Void, Never>? in
            guard var queue = waiters[key], !queue.isEmpty else {
                waiters[key] = nil
                return nil
            }
            let first = queue.removeFirst()
            waiters[key] = queue
            return first
        }
        next?.resume()
    }

    /// Keys held or waited for: 0 when nobody holds a turn (memory is bounded by the callers in flight).
    package var heldKeys: Int { waiters.withLock { $0.count } }
}
