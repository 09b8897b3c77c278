import Dispatch
import TabStoreStore
import TabStoreSupport

/// Connections to one database, at most `maxConnections`, opened when needed and reused.
///
/// libpq blocks its thread for a whole round trip, so statements never run on an event loop or a thread of
/// the concurrency pool (two of them on two cores): a caller waits suspended for a connection (up to
/// `acquireTimeout`), then its work runs on a queue of its own. A connection that broke is discarded; one
/// the server closed while it was idle (a restart) is replaced before it is used, so after a restart only
/// requests made while the database was down fail (503).
package final class PostgresPool: Sendable {
    package struct Settings: Sendable {
        package var conninfo: String
        package var maxConnections = 10
        /// Seconds a caller waits for a free connection before it gets "every connection is busy" (503).
        package var acquireTimeout = 5.0
        package var connectTimeoutSeconds = 5
        /// Seconds one statement may take on a pooled connection (client-side deadline and server-side timeouts).
        package var statementTimeout: Double?

        package init(conninfo: String) { self.conninfo = conninfo }

        /// A new connection with the pool's timeouts, connecting for no longer than what is left until `deadline`
        /// (libpq counts whole seconds, at least 2, so a connect may end up to 2 s past it).
        func connect(by deadline: UInt64?) throws(PostgresFailure) -> PostgresConnection {
            var timeout = connectTimeoutSeconds
            if let deadline {
                let left = RequestDeadline.remaining(until: deadline)
                guard left > 0 else { throw PostgresConnection.deadlineFailure(statementTimeout ?? 0) }
                timeout = min(timeout, max(2, Int(left.rounded(.up))))
            }
            let connection = try PostgresConnection(conninfo: conninfo, connectTimeoutSeconds: timeout, sessionTimeoutSeconds: statementTimeout)
            connection.statementDeadline = statementTimeout
            return connection
        }

    }

    /// What a waiting caller is given: an open connection, or the right to open one.
    fileprivate enum Grant {
        case connection(PostgresConnection)
        case open
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Grant, Error>
    }

    private struct State {
        var idle: [PostgresConnection] = []
        /// Connections that exist or are being opened (idle ones included).
        var open = 0
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
        var closed = false
    }

    package let settings: Settings
    private let state = Locked(State())
    /// The bound of a request's work (`settings.statementTimeout` at first; tests change it with `setRequestBound`).
    private let requestBound: Locked<Double?>
    fileprivate let queue = DispatchQueue(label: "tabstore-postgres", qos: .userInitiated, attributes: .concurrent)

    package init(settings: Settings) {
        self.settings = settings
        requestBound = Locked(settings.statementTimeout)
    }

    /// When the caller's work must end: its request's arrival plus the bound (nil: unbounded).
    private var callerDeadline: UInt64? { requestBound.withLock { $0 }.map { RequestDeadline.deadline(bound: $0) } }

    /// Changes the bound of requests from now on (tests: data made with headroom, then the bound tested); each
    /// statement stays bounded by `settings.statementTimeout` too.
    package func setRequestBound(_ seconds: Double?) { requestBound.withLock { $0 = seconds } }

    /// Runs `body` with a connection of its own on the pool's queue.
    /// - Throws: what `body` throws; `StorageError` (unavailable) when no connection can be had.
    package func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let deadline = callerDeadline
        let grant = try await acquire(by: deadline)
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                var connection: PostgresConnection?
                do {
                    if case .connection(let idle) = grant, idle.isAlive() {
                        connection = idle
                    } else {
                        connection = try self.settings.connect(by: deadline)
                    }
                    let value = try connection!.bounded(by: deadline, body)
                    self.release(connection, broken: !connection!.isReusable)
                    continuation.resume(returning: value)
                } catch {
                    self.release(connection, broken: !(connection?.isReusable ?? false))
                    continuation.resume(throwing: Self.storageError(error))
                }
            }
        }
    }

    /// Several statements on one connection with suspension points between them (a transaction read in pages):
    /// `body` gets a session whose `run` calls all use the same connection, given back when `body` returns
    /// (discarded when it is left inside a transaction or broken).
    package func session<T>(_ body: (Session) async throws -> T) async throws -> T {
        let deadline = callerDeadline
        let session = Session(pool: self, grant: try await acquire(by: deadline), deadline: deadline)
        do {
            let value = try await body(session)
            session.end()
            return value
        } catch {
            session.end()
            throw error
        }
    }

    /// One checked-out connection; its `run` calls must not overlap (each awaits the last).
    ///
    /// Each `run` takes the connection out under a lock and puts it back when its work is done, and `end` takes it
    /// under the same lock: the runs and the end happen on different threads, and the lock (not only the
    /// continuation between them) orders what each does to the connection.
    package final class Session: Sendable {
        private struct Held {
            var grant: Grant?
            var connection: PostgresConnection?
        }

        private let pool: PostgresPool
        private let held: Locked<Held>
        /// When the session's work must end (its request's arrival plus the bound).
        private let deadline: UInt64?

        fileprivate init(pool: PostgresPool, grant: Grant, deadline: UInt64?) {
            self.pool = pool
            held = Locked(Held(grant: grant))
            self.deadline = deadline
        }

        package func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                pool.queue.async {
                    var now = self.held.withLock { held in
                        defer { held = Held() }
                        return held
                    }
                    do {
                        if now.connection == nil {
                            if case .connection(let idle)? = now.grant, idle.isAlive() {
                                now.connection = idle
                            } else {
                                now.connection = try self.pool.settings.connect(by: self.deadline)
                            }
                            now.grant = nil
                        }
                        let value = try now.connection!.bounded(by: self.deadline, body)
                        self.held.withLock { $0 = now }
                        continuation.resume(returning: value)
                    } catch {
                        self.held.withLock { $0 = now }
                        continuation.resume(throwing: PostgresPool.storageError(error))
                    }
                }
            }
        }

        /// Gives the connection (or the right to open one) back to the pool.
        fileprivate func end() {
            let connection = held.withLock { held in
                defer { held = Held() }
                return held.connection
            }
            if let connection {
                pool.release(connection, broken: !connection.isReusable)
            } else {
                pool.release(nil, broken: true)  // never opened (or failed to): frees its place
            }
        }
    }

    /// A libpq failure that means the database cannot serve becomes the 503 the API maps `StorageError`s
    /// that are `isUnavailable` to; other failures stay as they are for the caller to interpret.
    package static func storageError(_ error: any Error) -> any Error {
        guard let failure = error as? PostgresFailure, failure.isUnavailable else { return error }
        return StorageError(unavailable: "the database is unreachable", message: failure.message, sql: failure.sql)
    }

    /// A connection, or the right to open one, waiting at most `acquireTimeout` and never past `deadline`.
    fileprivate func acquire(by deadline: UInt64?) async throws -> Grant {
        enum Immediate { case grant(Grant), closed, wait }
        let immediate = state.withLock { state -> Immediate in
            if state.closed { return .closed }
            if let connection = state.idle.popLast() { return .grant(.connection(connection)) }
            if state.open < settings.maxConnections {
                state.open += 1
                return .grant(.open)
            }
            return .wait
        }
        switch immediate {
        case .grant(let grant): return grant
        case .closed: throw StorageError(unavailable: "the store is closed", message: "the PostgreSQL store is closed")
        case .wait: break
        }
        return try await withCheckedThrowingContinuation { continuation in
            let id = state.withLock { state -> UInt64? in
                // A connection may have come back between the two locks.
                if let connection = state.idle.popLast() {
                    continuation.resume(returning: .connection(connection))
                    return nil
                }
                if state.open < settings.maxConnections {
                    state.open += 1
                    continuation.resume(returning: .open)
                    return nil
                }
                state.nextWaiter &+= 1
                state.waiters.append(Waiter(id: state.nextWaiter, continuation: continuation))
                return state.nextWaiter
            }
            guard let id else { return }
            let wait = min(settings.acquireTimeout, deadline.map { RequestDeadline.remaining(until: $0) } ?? .infinity)
            queue.asyncAfter(deadline: .now() + max(0, wait)) {
                let expired = self.state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(throwing: StorageError(
                    unavailable: "every database connection is busy",
                    message: "no PostgreSQL connection became free within \((wait * 1000).rounded() / 1000) s (\(self.settings.maxConnections) in use)"))
            }
        }
    }

    /// Gives a connection back: to the first waiter, else to the idle list; a broken one (or none, when
    /// opening failed) frees its place, which a waiter may use to open a new one.
    fileprivate func release(_ connection: PostgresConnection?, broken: Bool) {
        let (waiter, grant) = state.withLock { state -> (Waiter?, Grant?) in
            if let connection, !broken, !state.closed {
                if !state.waiters.isEmpty { return (state.waiters.removeFirst(), .connection(connection)) }
                state.idle.append(connection)
                return (nil, nil)
            }
            state.open -= 1
            if !state.closed, !state.waiters.isEmpty {
                state.open += 1
                return (state.waiters.removeFirst(), .open)
            }
            return (nil, nil)
        }
        if let waiter, let grant { waiter.continuation.resume(returning: grant) }
    }

    /// Closes idle connections; those in use close when they come back. Waiters get "closed".
    package func close() {
        let (idle, waiters) = state.withLock { state -> ([PostgresConnection], [Waiter]) in
            state.closed = true
            defer {
                state.open -= state.idle.count
                state.idle = []
                state.waiters = []
            }
            return (state.idle, state.waiters)
        }
        _ = idle  // released here: `deinit` closes each connection
        for waiter in waiters {
            waiter.continuation.resume(throwing: StorageError(unavailable: "the store is closed", message: "the PostgreSQL store is closed"))
        }
    }
}
