import Dispatch

/// Read-only connections that run beside the writer (WAL gives each read its own snapshot).
final class ReadPool: Sendable {
    /// Idle connections; a connection is used by exactly one caller between checkout and return.
    private let idle: Locked<[SQLiteConnection]>
    private let available: DispatchSemaphore

    init(connections: [SQLiteConnection]) {
        idle = Locked(connections)
        // Start at 0 and signal: libdispatch traps when a semaphore is released below its initial value.
        available = DispatchSemaphore(value: 0)
        for _ in connections { available.signal() }
    }

    /// Runs `body` with a connection of its own.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        available.wait()
        let connection = idle.withLock { $0.removeLast() }
        defer {
            idle.withLock { $0.append(connection) }
            available.signal()
        }
        return try body(connection)
    }

    /// Runs `body` when a connection is idle right now; nil (without running it) when every one is busy,
    /// so an event loop never waits behind a long read.
    func readNow<T>(_ body: (SQLiteConnection) throws -> T) throws -> T? {
        guard available.wait(timeout: .now()) == .success else { return nil }
        let connection = idle.withLock { $0.removeLast() }
        defer {
            idle.withLock { $0.append(connection) }
            available.signal()
        }
        return try body(connection)
    }

    /// Closes every connection (waits for those checked out).
    func drain(count: Int) {
        for _ in 0..<count { available.wait() }
        idle.withLock { $0.removeAll() }
    }
}
