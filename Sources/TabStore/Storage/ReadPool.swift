import CSQLite
import TabStoreStore
import TabStoreSupport

/// Read-only connections that run beside the writer (WAL gives each read its own snapshot).
///
/// A caller that finds every connection busy suspends (its task waits in line, its thread goes back to the
/// concurrency pool) instead of blocking a pool thread on a semaphore: with only as many pool threads as
/// cores, blocked readers would stall every other task, writes included.
final class ReadPool: Sendable {
    private struct State {
        var idle: [SQLiteConnection]
        /// Tasks waiting for a connection, first come first served; each is handed one by `checkIn`.
        var waiters: [CheckedContinuation<SQLiteConnection, Never>] = []
        /// Connections not checked in (in use); `close` waits until it is 0.
        var checkedOut = 0
        var closed = false
        var closeWaiter: CheckedContinuation<Void, Never>?
    }

    /// Idle connections and waiters; every thread touches them only under this lock.
    private let state: Locked<State>

    init(connections: [SQLiteConnection]) {
        state = Locked(State(idle: connections))
    }

    /// Runs `body` with a connection of its own, waiting (suspended) for one when all are busy.
    /// - Throws: what `body` throws; `StorageError` once the pool is closed.
    func read<T>(_ body: (SQLiteConnection) throws -> T) async throws -> T {
        let connection = try await checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Runs `body` when a connection is idle right now; nil (without running it) when every one is busy,
    /// so an event loop never waits behind a long read.
    func readNow<T>(_ body: (SQLiteConnection) throws -> T) throws -> T? {
        let connection = state.withLock { state -> SQLiteConnection? in
            guard !state.closed, let connection = state.idle.popLast() else { return nil }
            state.checkedOut += 1
            return connection
        }
        guard let connection else { return nil }
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() async throws -> SQLiteConnection {
        enum Immediate { case connection(SQLiteConnection), closed, wait }
        let immediate = state.withLock { state -> Immediate in
            if state.closed { return .closed }
            guard let connection = state.idle.popLast() else { return .wait }
            state.checkedOut += 1
            return .connection(connection)
        }
        switch immediate {
        case .connection(let connection): return connection
        case .closed: throw StorageError(extendedCode: SQLITE_ERROR, message: "the store is closed")
        case .wait: break
        }
        let connection = await withCheckedContinuation { (continuation: CheckedContinuation<SQLiteConnection, Never>) in
            let handed = state.withLock { state -> SQLiteConnection? in
                // Checked again under the lock: a connection may have come back meanwhile.
                if let connection = state.idle.popLast() {
                    state.checkedOut += 1
                    return connection
                }
                state.waiters.append(continuation)
                return nil
            }
            if let handed { continuation.resume(returning: handed) }
        }
        return connection
    }

    /// Gives the connection to the first waiter (it stays checked out), or back to the idle list.
    private func checkIn(_ connection: SQLiteConnection) {
        enum Next { case waiter(CheckedContinuation<SQLiteConnection, Never>), closeDone(CheckedContinuation<Void, Never>), none }
        let next = state.withLock { state -> Next in
            if !state.waiters.isEmpty { return .waiter(state.waiters.removeFirst()) }
            state.checkedOut -= 1
            state.idle.append(connection)
            if state.closed, state.checkedOut == 0, let waiter = state.closeWaiter {
                state.closeWaiter = nil
                return .closeDone(waiter)
            }
            return .none
        }
        switch next {
        case .waiter(let waiter): waiter.resume(returning: connection)
        case .closeDone(let waiter): waiter.resume()
        case .none: break
        }
    }

    /// Refuses new reads and drops the idle connections without waiting: for a store that never served
    /// (start-up failures); a connection still in use is dropped with the pool.
    func closeNow() {
        state.withLock { state in
            state.closed = true
            state.idle.removeAll()
        }
    }

    /// Refuses new reads, lets queued ones finish, waits for every connection to come back, then drops them.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                state.closed = true
                guard state.checkedOut > 0 || !state.waiters.isEmpty else { return true }
                state.closeWaiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
        state.withLock { $0.idle.removeAll() }
    }
}
