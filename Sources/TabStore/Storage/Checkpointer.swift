import CSQLite
import Dispatch
import Foundation
import TabStoreStore
import TabStoreSupport

/// Copies committed pages from the WAL into the database file on its own thread and connection, so the
/// writer's commits never pay for it. (SQLite's automatic checkpoint runs inside the COMMIT that takes the
/// WAL past 1,000 pages: that commit, and every write waiting in its batch, waited for the copy and the
/// database file's fsync.) The writer says when it committed; a few times a second, when something was
/// committed since, this runs a PASSIVE checkpoint, which never blocks the writer or readers.
///
/// A PASSIVE checkpoint alone never lets the WAL start over while writes keep coming: SQLite rewinds the log
/// only when a write begins with every frame already copied, and the writer has always appended more by the
/// time a pass ends. So under sustained writes the file grew without end (hundreds of MB a minute in the
/// PATCH benchmark), each append extending it. When a pass finds the log at `restartFrames` or more and
/// copied all of it, it makes short passes over what was committed meanwhile until little is left, then asks
/// the writer to copy the few frames committed since, between two batches (`copyRestOnWriter`); the writer's
/// next transaction then writes from the start of the file again. (Without the short passes the writer copied
/// everything committed during the long pass: 6 µs of its time per keyed PATCH, now 3.)
final class Checkpointer: Sendable {
    private struct State {
        var committed = false
        var closed = false
        /// The last pass copied a long log whole: the writer finishes the copy so the log can start over.
        var restartWanted = false
    }

    /// The WAL length (in frames, one page each) past which the log is made to start over: SQLite's own
    /// automatic checkpoint threshold.
    static let restartFrames: Int32 = 1000
    /// Passes the thread makes after a long one before it leaves the rest to the writer, and the number of new
    /// frames at which a pass is short enough to stop: the writer's copy is then about a batch or two.
    static let catchUpPasses = 3
    static let restFrames: Int32 = 64

    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// How long the thread waits between checkpoints while writes keep coming: a page written again within it
    /// is copied once (at 50 ms the copy cost a keyed PATCH a few percent more); the WAL holds about this long's writes.
    static let interval = DispatchTimeInterval.milliseconds(200)

    /// Starts the thread, which owns `connection` from now on.
    init(connection: SQLiteConnection) {
        NamedThread.start("tabstore-ckpt") { [self] in self.loop(connection) }
    }

    /// A batch committed: its pages are in the WAL.
    func committed() {
        let first = state.withLock { state -> Bool in
            defer { state.committed = true }
            return !state.committed
        }
        if first { wake.signal() }
    }

    /// Called by the writer between batches (never inside one): when the last pass asked for it, copies the
    /// frames committed since on the writer's own connection, so its next transaction restarts the log. Only a
    /// few batches' pages are left to copy by then; a reader still on an older snapshot makes it wait for a later pass.
    func copyRestOnWriter(_ db: SQLiteConnection) {
        let wanted = state.withLock { state -> Bool in
            defer { state.restartWanted = false }
            return state.restartWanted
        }
        if wanted { try? db.execute("PRAGMA wal_checkpoint(PASSIVE)") }
    }

    /// Runs a last checkpoint and ends the thread.
    func close() {
        state.withLock { $0.closed = true }
        wake.signal()
        done.wait()
    }

    private func loop(_ db: SQLiteConnection) {
        while true {
            wake.wait()
            // Let a burst of commits collect, then copy them in one pass.
            _ = wake.wait(timeout: .now() + Self.interval)
            let (work, closed) = state.withLock { state -> (Bool, Bool) in
                defer { state.committed = false }
                return (state.committed, state.closed)
            }
            if work || closed {
                // PASSIVE: as much as no reader still needs; what is left goes in the next round. A failure
                // (disk full, I/O) leaves the pages in the WAL, where readers still find them.
                var logFrames: Int32 = 0
                var copiedFrames: Int32 = 0
                var rc = sqlite3_wal_checkpoint_v2(db.handle, nil, closed ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE,
                                                   &logFrames, &copiedFrames)
                if rc == SQLITE_OK, logFrames >= Self.restartFrames, copiedFrames == logFrames {
                    // What the writer would copy is what was committed while this pass ran (a long pass: many
                    // frames, and the writer's batches wait for that copy). Passes here until the last one found
                    // only a few new frames, so the writer's share is small.
                    for _ in 0..<Self.catchUpPasses {
                        let before = logFrames
                        rc = sqlite3_wal_checkpoint_v2(db.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames)
                        guard rc == SQLITE_OK, copiedFrames == logFrames, logFrames - before > Self.restFrames else { break }
                    }
                    if rc == SQLITE_OK, copiedFrames == logFrames {
                        state.withLock { $0.restartWanted = true }
                    }
                }
            }
            if closed { break }
        }
        done.signal()
    }
}
