import Glibc

/// A value behind a pthread mutex: the one way shared mutable state is guarded in TabStore.
///
/// Not `Synchronization.Mutex`: on Linux its futex and atomics live in the uninstrumented standard
/// library, so ThreadSanitizer cannot see the lock and reports every guarded access as a race; pthread
/// mutexes are intercepted by the sanitizer, which keeps `swift test --sanitize=thread` meaningful.
/// `@unchecked Sendable` because every access to `value` happens inside `withLock`.
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Inlinable so callers in other layers get it
    /// specialized for their value type, as they did when everything was one module.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
