import CSystem
import Glibc
import TabStoreSupport

/// What a connection wants to hear about from its socket; the state machine says, the selector translates.
struct Interest: OptionSet, Sendable, Hashable, CustomStringConvertible {
    let rawValue: UInt8
    /// Readable, or the peer half-closed (EOF).
    static let read = Interest(rawValue: 1)
    /// Writable again after a partial write.
    static let write = Interest(rawValue: 2)

    var description: String {
        switch (contains(.read), contains(.write)) {
        case (true, true): "[.read, .write]"
        case (true, false): ".read"
        case (false, true): ".write"
        case (false, false): "[]"
        }
    }
}

/// One event loop's epoll(7) instance and its eventfd wake-up: register, modify, deregister, wait.
///
/// Tokens (`UInt64`) name what was registered; the loop maps them back to the listener, the wake-up or a
/// connection. `@unchecked Sendable`: `wake()` is the only method other threads call (it writes to the
/// eventfd, a descriptor fixed at init); everything else, the event arrays included, belongs to the loop's thread.
final class EpollSelector: @unchecked Sendable {
    /// One ready descriptor from the last `wait`.
    struct Readiness {
        let bits: UInt32

        /// Bytes (or the peer's EOF) to read.
        var readable: Bool { bits & (TABSTORE_EPOLLIN | TABSTORE_EPOLLRDHUP) != 0 }
        var writable: Bool { bits & TABSTORE_EPOLLOUT != 0 }
        /// An error or a hang-up with nothing left to read: the socket is done.
        var failed: Bool { bits & (TABSTORE_EPOLLERR | TABSTORE_EPOLLHUP) != 0 && bits & TABSTORE_EPOLLIN == 0 }
    }

    static let capacity = 256
    private let epfd: Int32
    private let wakeFd: Int32
    private var events = [UInt32](repeating: 0, count: capacity)
    private var tokens = [UInt64](repeating: 0, count: capacity)

    /// Creates the epoll instance and registers the eventfd under `wakeToken`.
    /// - Throws: `SystemError` when either descriptor cannot be created.
    init(wakeToken: UInt64) throws(SystemError) {
        epfd = Int32(try Syscall.retrying("epoll_create1") { Int(tabstore_epoll_create()) })
        let wake = tabstore_eventfd()
        guard wake >= 0 else {
            let code = errno
            Syscall.close(epfd)
            throw SystemError(call: "eventfd", errno: code)
        }
        wakeFd = wake
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_ADD, wakeFd, TABSTORE_EPOLLIN, wakeToken)
    }

    /// The epoll bits for an interest: reading always includes EPOLLRDHUP, so a half-close is seen.
    static func mask(_ interest: Interest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= TABSTORE_EPOLLIN | TABSTORE_EPOLLRDHUP }
        if interest.contains(.write) { mask |= TABSTORE_EPOLLOUT }
        return mask
    }

    @discardableResult
    func register(_ fd: Int32, mask: UInt32, token: UInt64) -> Bool {
        tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_ADD, fd, mask, token) == 0
    }

    /// Watches a listening socket with EPOLLEXCLUSIVE: one loop is woken per connection, not all (no
    /// thundering herd); such a registration cannot be modified, only deregistered and registered again.
    func registerExclusive(listener fd: Int32, token: UInt64) -> Bool {
        register(fd, mask: TABSTORE_EPOLLIN | TABSTORE_EPOLLEXCLUSIVE, token: token)
    }

    func modify(_ fd: Int32, mask: UInt32, token: UInt64) {
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_MOD, fd, mask, token)
    }

    func deregister(_ fd: Int32) {
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits up to `timeout` milliseconds; returns how many events `token(at:)` and `readiness(at:)` now
    /// hold (0 after a signal interrupted the wait), or the error when epoll_wait failed.
    func wait(timeout: Int32) -> Result<Int, SystemError> {
        let count = tabstore_epoll_wait(epfd, &events, &tokens, Int32(Self.capacity), timeout)
        if count >= 0 { return .success(Int(count)) }
        let code = errno
        return code == EINTR ? .success(0) : .failure(SystemError(call: "epoll_wait", errno: code))
    }

    func token(at index: Int) -> UInt64 { tokens[index] }

    func readiness(at index: Int) -> Readiness { Readiness(bits: events[index]) }

    /// Wakes the loop from any thread.
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFd, &one, 8)
    }

    /// Resets the eventfd after its token came up, so the next `wake` is seen again.
    func consumeWake() {
        var value: UInt64 = 0
        _ = Glibc.read(wakeFd, &value, 8)
    }

    /// Closes both descriptors; the loop calls it once, as its last act.
    func close() {
        Syscall.close(wakeFd)
        Syscall.close(epfd)
    }
}
