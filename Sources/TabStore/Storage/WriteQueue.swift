import CSQLite
import Dispatch
import Foundation
import TabStoreStore
import TabStoreSupport

/// The single writer: concurrent writes queue here and a dedicated thread commits them in batches
/// (group commit). Each batch is one transaction; each job runs inside its own savepoint, so one caller's
/// refused change never affects another's; every caller is answered only after its batch committed.
final class WriteQueue: Sendable {
    /// One queued write. Created by the caller, then touched only by the writer thread until `complete`,
    /// which is why it is `@unchecked Sendable`.
    final class Job: @unchecked Sendable {
        /// Runs the write; its error when it failed and its savepoint must be rolled back.
        let run: (SQLiteConnection) -> (any Error)?
        /// Called on the writer thread right after the batch committed, in commit order, before any caller
        /// of the batch is answered (caches follow the database here).
        let committed: () -> Void
        /// Called once after the batch's commit (or its failure).
        let complete: (Error?) -> Void
        /// When the caller's bound passes (monotonic nanoseconds); nil without a bound.
        let deadline: UInt64?
        /// Answers the caller with the bound's error (`dropped`: the write was taken off the queue unwritten) and
        /// returns it; nil when the caller was answered already.
        let expire: (_ dropped: Bool) -> StorageError?
        /// The bound's watcher answered the caller (touched only under the queue's lock).
        var expired = false

        init(run: @escaping (SQLiteConnection) -> (any Error)?, committed: @escaping () -> Void, complete: @escaping (Error?) -> Void,
             deadline: UInt64? = nil, expire: @escaping (_ dropped: Bool) -> StorageError? = { _ in nil }) {
            self.run = run
            self.committed = committed
            self.complete = complete
            self.deadline = deadline
            self.expire = expire
        }
    }

    private struct State {
        var jobs: [Job] = []
        /// The batch the writer runs now (its callers' bounds still count).
        var running: [Job] = []
        var closed = false
        var finished = false
        /// The deadline the bound's watcher sleeps until; nil when it sleeps until woken.
        var watched: UInt64?
    }

    /// Queue state; the writer thread and every caller touch it only under this lock.
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Wakes the bound's watcher: a write came with an earlier deadline than it sleeps until, or the queue closed.
    private let watch = DispatchSemaphore(value: 0)
    private let maxBatch: Int
    private let onBatch: @Sendable (_ size: Int, _ seconds: Double) -> Void
    /// Run on the writer's connection after each batch, once its callers are answered (WAL upkeep).
    private let betweenBatches: @Sendable (SQLiteConnection) -> Void
    /// Run in each batch's transaction after its jobs, before COMMIT (what the batch's jobs share, stored once);
    /// when it throws, the batch fails as a failed COMMIT does.
    private let beforeCommit: @Sendable (SQLiteConnection) throws -> Void
    /// Run after each batch that committed, before its jobs' `committed` (what `beforeCommit` stored is durable).
    private let afterCommit: @Sendable () -> Void
    /// Told about every failure that means the database cannot take writes, and about every commit.
    let health: StorageHealth
    /// Seconds a caller waits for its write, counted from its request's arrival (`RequestDeadline`); nil: as long
    /// as the writer takes. Past it the caller gets 503: a write still queued is dropped (never written), one
    /// the writer is running (a disk that stopped answering) may still commit, and says so through `late`.
    var bound: Double? { boundSeconds.withLock { $0 } }
    private let boundSeconds: Locked<Double?>

    /// Starts the writer thread, which owns `connection` from now on.
    init(connection: SQLiteConnection, maxBatch: Int, health: StorageHealth, onBatch: @escaping @Sendable (Int, Double) -> Void,
         beforeCommit: @escaping @Sendable (SQLiteConnection) throws -> Void = { _ in },
         afterCommit: @escaping @Sendable () -> Void = {},
         betweenBatches: @escaping @Sendable (SQLiteConnection) -> Void = { _ in }, bound: Double? = nil) {
        boundSeconds = Locked(bound)
        self.beforeCommit = beforeCommit
        self.afterCommit = afterCommit
        self.maxBatch = max(1, maxBatch)
        self.health = health
        self.onBatch = onBatch
        self.betweenBatches = betweenBatches
        NamedThread.start("tabstore-writer") { [self] in self.loop(connection) }
        NamedThread.start("tabstore-write-bound") { [self] in self.watchBounds() }
    }

    /// Runs `body` in the next batch and returns its result once that batch committed.
    /// - Parameter afterCommit: given `body`'s result on the writer thread once the batch committed (not when
    ///   `body` threw or the commit failed), before any write of a later batch and before any caller is answered.
    /// - Parameter late: called on the writer thread when the write committed after its caller had its 503
    ///   (the bound passed while the writer ran it), so what follows the database can catch up.
    /// - Throws: what `body` threw, or the batch's commit failure; `StorageError` (unavailable) past `bound`.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T,
                            afterCommit: (@Sendable (T) -> Void)? = nil, late: (@Sendable () -> Void)? = nil) async throws -> T {
        let bound = self.bound
        let deadline = bound.map { RequestDeadline.deadline(bound: $0) }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            // Answered once: by the writer, or by the bound, whichever comes first.
            let waiting = Locked<CheckedContinuation<T, Error>?>(continuation)
            let answer: @Sendable (Result<T, Error>) -> Bool = { result in
                guard let continuation = waiting.withLock({ waiting in defer { waiting = nil }; return waiting }) else { return false }
                continuation.resume(with: result)
                return true
            }
            // Written by the writer thread in `run`, read by it again in `complete`: one thread only.
            nonisolated(unsafe) var result: Result<T, Error>?
            let job = Job(
                run: { db in
                    result = Result { try body(db) }
                    if case .failure(let error) = result { return error }
                    return nil
                },
                committed: {
                    if let afterCommit, case .success(let value)? = result { afterCommit(value) }
                },
                complete: { commitError in
                    let outcome: Result<T, Error> = switch result {
                    case .failure(let error)?: .failure(error)
                    case .success(let value)?: commitError.map { .failure($0) } ?? .success(value)
                    case nil: .failure(commitError ?? StorageError(extendedCode: SQLITE_ERROR, message: "write was not run"))
                    }
                    if !answer(outcome), case .success = outcome { late?() }
                },
                deadline: deadline,
                expire: { dropped in
                    let bound = bound ?? 0
                    // The client hears which: a dropped write was never made; one the writer ran may have been, and
                    // its retry with the same Idempotency-Key gets its answer if it was.
                    let error = StorageError(unavailable: dropped ? "the database did not answer within \(bound) s; the write was not made"
                        : "the database did not finish the write within \(bound) s; it may still be made: retry with the same Idempotency-Key",
                                             message: dropped ? "the write waited \(bound) s for the writer and was not written"
                        : "the writer ran the write for longer than \(bound) s (a disk that stopped answering?); it may still commit")
                    return answer(.failure(error)) ? error : nil
                })
            // One watcher thread for every caller's bound, woken only when this deadline comes before the one
            // it sleeps until (deadlines mostly grow with arrival): no timer per write.
            let (accepted, rewatch) = state.withLock { state -> (Bool, Bool) in
                guard !state.closed else { return (false, false) }
                state.jobs.append(job)
                guard let deadline, state.watched.map({ deadline < $0 }) ?? true else { return (true, false) }
                state.watched = deadline
                return (true, true)
            }
            if accepted {
                wake.signal()
                if rewatch { watch.signal() }
            } else {
                _ = answer(.failure(StorageError(extendedCode: SQLITE_ERROR, message: "the store is closed")))
            }
        }
    }

    /// Writes waiting for the writer, not yet in a batch (tests: a write known to be queued).
    var queuedCount: Int { state.withLock { $0.jobs.count } }

    /// Tests: answers the caller of every write the writer is running now as its bound passing would (503, the
    /// write may still commit), without waiting for the bound: the case of a disk that stopped answering, made
    /// without depending on how fast the machine is.
    func expireRunning() {
        let overrun = state.withLock { state -> [Job] in
            let due = state.running.filter { !$0.expired }
            for job in due { job.expired = true }
            return due
        }
        for job in overrun { if let error = job.expire(false) { health.record(error) } }
    }

    /// Changes `bound` for the writes that come next (tests: data made with headroom, then the bound tested).
    func setBound(_ seconds: Double?) { boundSeconds.withLock { $0 = seconds } }

    /// The bound's watcher: sleeps until the earliest deadline of a queued or running write, then answers every
    /// caller whose bound passed. A job still queued leaves the queue unwritten; one the writer runs goes on,
    /// its caller answered now. Either way the caller gets 503 and `/readyz` reports the writer stuck until a
    /// batch commits. Ends once the writer has finished (every caller answered).
    private func watchBounds() {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            let (dropped, overrun, next, finished) = state.withLock { state -> ([Job], [Job], UInt64?, Bool) in
                let due: (Job) -> Bool = { job in !job.expired && job.deadline.map { $0 <= now } == true }
                let dropped = state.jobs.filter(due)
                if !dropped.isEmpty { state.jobs.removeAll(where: due) }
                let overrun = state.running.filter(due)
                for job in dropped + overrun { job.expired = true }
                let pending = state.jobs.lazy.filter { !$0.expired }.compactMap(\.deadline)
                let running = state.running.lazy.filter { !$0.expired }.compactMap(\.deadline)
                state.watched = [pending.min(), running.min()].compactMap { $0 }.min()
                return (dropped, overrun, state.watched, state.finished)
            }
            for job in dropped { if let error = job.expire(true) { health.record(error) } }
            for job in overrun { if let error = job.expire(false) { health.record(error) } }
            if finished { return }
            if let next, next != UInt64.max {
                _ = watch.wait(timeout: DispatchTime(uptimeNanoseconds: next))
            } else {
                watch.wait()
            }
        }
    }

    /// Stops accepting writes, finishes the queued ones and waits for the writer thread to end.
    func close() {
        let alreadyFinished = state.withLock { state -> Bool in
            state.closed = true
            return state.finished
        }
        guard !alreadyFinished else { return }
        wake.signal()
        done.wait()
        watch.signal()  // the watcher sees `finished` and ends
    }

    private func loop(_ db: SQLiteConnection) {
        while true {
            let (batch, closed) = state.withLock { state -> ([Job], Bool) in
                let count = min(maxBatch, state.jobs.count)
                let batch = Array(state.jobs.prefix(count))
                state.jobs.removeFirst(count)
                state.running = batch
                return (batch, state.closed)
            }
            if batch.isEmpty {
                if closed { break }
                wake.wait()
                continue
            }
            commit(batch, on: db)
            state.withLock { $0.running.removeAll(keepingCapacity: true) }
        }
        state.withLock { $0.finished = true }
        done.signal()
    }

    private func commit(_ batch: [Job], on db: SQLiteConnection) {
        let started = DispatchTime.now().uptimeNanoseconds
        var failure: Error?
        // A job that failed because the disk is full or read-only says the database is unwritable even
        // when the rest of its batch commits.
        var unavailable: (any Error)?
        do {
            // Prepared once per connection and reused: these run for every write.
            try db.run("BEGIN IMMEDIATE")
            for job in batch {
                // Each job in its own savepoint: a refused change never affects the rest of its batch.
                if let error = try db.inSavepoint({ job.run(db) }), (error as? StorageError)?.isUnavailable == true {
                    unavailable = error
                }
            }
            try beforeCommit(db)
            try db.run("COMMIT")
        } catch {
            failure = error
            try? db.execute("ROLLBACK")  // the batch failed as a whole; each caller gets `error` below
        }
        if let error = unavailable ?? failure {
            health.record(error)
        } else {
            health.recovered()
        }
        if failure == nil {
            afterCommit()
            for job in batch { job.committed() }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        onBatch(batch.count, seconds)
        for job in batch { job.complete(failure) }
        betweenBatches(db)
    }
}
