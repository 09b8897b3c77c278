import Glibc
import TabStoreSupport

/// Admission for the expensive reads (history pages, exports), so one user's reads never delay another's writes.
///
/// A history page of a hundred large revisions is megabytes to read, parse and encode again. Without a bound,
/// one user's concurrent reads took every read connection (SQLite readers, PostgreSQL pool) and every thread of
/// the concurrency pool (as many as cores), where writes decode and validate: another user's PATCH waited behind
/// them (7 ms unloaded, 0.9 s with 8 readers, 6 s with 64; issue 27). Three bounds now:
/// - per user, one read at a time (`withUserTurn`); at most `perUserWaiting` more wait their turn, further ones
///   get 429 `too-many-history-reads` with `Retry-After`; and `bytesPerSecond` of pages (cached pages cost no
///   rendering, but sending a megabyte a thousand times a second takes a core too), past it 429 likewise;
/// - over all users, `concurrent` reads in the store at once (`withSlot`), first come first served; at most
///   `maxWaiting` wait, further ones get 503 `too-many-waiting`;
/// - the parsing and encoding runs on a thread of its own at a lower scheduling priority (`render`), never on
///   the concurrency pool or an event loop, so a write's thread always finds a core first.
package final class HistoryReads: Sendable {
    package struct Limits: Sendable {
        /// Reads of one user waiting behind the one in flight.
        package var perUserWaiting = 4
        /// Reads in the store (and rendering) at once, over all users.
        package var concurrent = 1
        /// Reads waiting for one of `concurrent`, over all users.
        package var maxWaiting = 1_024
        /// Bytes of pages one user is served per second (cached ones too: each is a megabyte to send); a user
        /// may go into debt by one page, then waits until the debt is paid back.
        package var bytesPerSecond = 8 << 20
        /// Seconds since 1970 (`APIConfiguration.clock`).
        package var clock: @Sendable () -> Int = { Int(Timestamp.unixNow()) }

        package init(perUserWaiting: Int = 4, concurrent: Int = 1, maxWaiting: Int = 1_024, bytesPerSecond: Int = 8 << 20,
                     clock: @escaping @Sendable () -> Int = { Int(Timestamp.unixNow()) }) {
            self.perUserWaiting = perUserWaiting
            self.concurrent = concurrent
            self.maxWaiting = maxWaiting
            self.bytesPerSecond = bytesPerSecond
            self.clock = clock
        }
    }

    /// Why a read was refused.
    package enum Refusal: Error, Equatable {
        /// The user already has a read in flight and `perUserWaiting` waiting.
        case userBusy
        /// The user was served more than `bytesPerSecond` lately; the debt is paid back in this many seconds.
        case userOverBudget(retryAfter: Int)
        /// `maxWaiting` reads already wait for a slot.
        case serverBusy
    }

    private enum Admission { case now, wait, refused }

    private struct State {
        /// Per user with a read in flight, the reads waiting behind it in arrival order.
        var users: [UserKey: [CheckedContinuation<Void, Never>]] = [:]
        var running = 0
        var queued: [CheckedContinuation<Void, Never>] = []
        /// The most reads ever in their slot at once (tests check the bounds).
        var peakRunning = 0
        var refusals = 0
        /// Per user served lately, the bytes still allowed (negative: owed) as of a second.
        var budgets: [UserKey: (balance: Int, second: Int)] = [:]
    }

    /// Users whose budget is tracked at most; past it, those whose budget is full again are forgotten.
    private static let trackedBudgets = 4_096

    package let limits: Limits
    private let state = Locked(State())
    /// Tests: awaited by each read once it holds its slot, before it reads the store.
    private let pause: (@Sendable () async -> Void)?

    package init(_ limits: Limits, pause: (@Sendable () async -> Void)? = nil) {
        var limits = limits
        limits.concurrent = max(1, limits.concurrent)
        limits.perUserWaiting = max(0, limits.perUserWaiting)
        limits.maxWaiting = max(0, limits.maxWaiting)
        self.limits = limits
        self.pause = pause
    }

    /// Runs `body` in the user's turn: after the user's reads that came first.
    /// - Throws: `Refusal.userBusy` (without running `body`) when too many of the user's reads wait; what `body` throws.
    package func withUserTurn<T: Sendable>(_ key: UserKey, _ body: () async throws -> T) async throws -> T {
        let admission = state.withLock { state -> Admission in
            guard let waiting = state.users[key] else {
                state.users[key] = []
                return .now
            }
            guard waiting.count < limits.perUserWaiting else {
                state.refusals &+= 1
                return .refused
            }
            return .wait
        }
        switch admission {
        case .refused: throw Refusal.userBusy
        case .wait:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked again under the lock: the turn may have been released meanwhile.
                let now = state.withLock { state -> Bool in
                    guard state.users[key] != nil else {
                        state.users[key] = []
                        return true
                    }
                    state.users[key]!.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        case .now: break
        }
        defer { releaseUser(key) }
        return try await body()
    }

    private func releaseUser(_ key: UserKey) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard var waiting = state.users[key], !waiting.isEmpty else {
                state.users[key] = nil
                return nil
            }
            let first = waiting.removeFirst()
            state.users[key] = waiting
            return first
        }
        next?.resume()
    }

    /// Runs `body` holding one of the `concurrent` slots.
    /// - Throws: `Refusal.serverBusy` (without running `body`) when `maxWaiting` reads wait already; what `body` throws.
    package func withSlot<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let admission = state.withLock { state -> Admission in
            if state.running < limits.concurrent {
                state.running += 1
                state.peakRunning = max(state.peakRunning, state.running)
                return .now
            }
            guard state.queued.count < limits.maxWaiting else {
                state.refusals &+= 1
                return .refused
            }
            return .wait
        }
        switch admission {
        case .refused: throw Refusal.serverBusy
        case .wait:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.running < limits.concurrent {
                        state.running += 1
                        state.peakRunning = max(state.peakRunning, state.running)
                        return true
                    }
                    state.queued.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        case .now: break
        }
        defer { releaseSlot() }
        if let pause { await pause() }
        return try await body()
    }

    /// Hands the slot to the first waiter (it stays taken), or frees it.
    private func releaseSlot() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.queued.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.queued.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` on a thread of its own at a lower priority (nice +10: the scheduler gives a write's thread
    /// ten times its share of a core) and returns its result. Called inside a slot, so at most `concurrent`
    /// such threads exist; a thread costs tens of microseconds beside milliseconds of work.
    package func render<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            NamedThread.start("tabstore-history") {
                // On Linux the nice value is per thread: 0 names the calling thread alone (setpriority(2), NOTES).
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
                continuation.resume(returning: body())
            }
        }
    }

    /// Refuses a read of `key` while the user owes bytes (served more than `bytesPerSecond` lately).
    /// - Throws: `Refusal.userOverBudget` with the seconds until the debt is paid back.
    package func checkBudget(_ key: UserKey) throws {
        let now = limits.clock()
        let owed = state.withLock { state -> Int in
            guard let budget = state.budgets[key] else { return 0 }
            let balance = refilled(budget, now: now)
            if balance >= 0 { return 0 }
            state.refusals &+= 1
            return -balance
        }
        guard owed > 0 else { return }
        let rate = max(1, limits.bytesPerSecond)
        throw Refusal.userOverBudget(retryAfter: min(60, max(1, owed / rate + (owed % rate == 0 ? 0 : 1))))
    }

    /// Counts `bytes` served to `key` against the user's budget.
    package func charge(_ key: UserKey, bytes: Int) {
        let now = limits.clock()
        state.withLock { state in
            let balance = state.budgets[key].map { refilled($0, now: now) } ?? limits.bytesPerSecond
            let (charged, overflow) = balance.subtractingReportingOverflow(bytes)
            state.budgets[key] = (overflow ? Int.min / 2 : max(Int.min / 2, charged), now)
            if state.budgets.count > Self.trackedBudgets {
                state.budgets = state.budgets.filter { refilled($0.value, now: now) < limits.bytesPerSecond }
            }
        }
    }

    /// A budget as of `now`: a second's worth more per second passed, at most `bytesPerSecond`.
    private func refilled(_ budget: (balance: Int, second: Int), now: Int) -> Int {
        let elapsed = max(0, now.subtractingReportingOverflow(budget.second).partialValue)
        let (added, overflow) = elapsed.multipliedReportingOverflow(by: max(0, limits.bytesPerSecond))
        let (sum, overflow2) = budget.balance.addingReportingOverflow(overflow ? Int.max / 2 : added)
        return min(limits.bytesPerSecond, overflow2 ? limits.bytesPerSecond : sum)
    }

    /// Reads of one user waiting for their turn (the one in flight not counted); tests wait for this.
    package func waiting(_ key: UserKey) -> Int { state.withLock { $0.users[key]?.count ?? 0 } }

    /// Reads waiting for a slot now.
    package var queued: Int { state.withLock { $0.queued.count } }

    /// Reads holding a slot now.
    package var running: Int { state.withLock { $0.running } }

    /// The most reads ever in their slots at once.
    package var peakRunning: Int { state.withLock { $0.peakRunning } }

    /// Reads refused (429 or 503) so far.
    package var refusals: Int { state.withLock { $0.refusals } }
}
