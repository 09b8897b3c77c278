import Dispatch
import Foundation
import TabStoreSupport

/// Copies committed pages from the WAL into the database file on its own thread and connection, so the
/// writer's commits never pay for it. (SQLite's automatic checkpoint runs inside the COMMIT that takes the
/// WAL past 1,000 pages: that commit, and every write waiting in its batch, waited for the copy and the
/// database file's fsync.) The writer says when it committed; a few times a second, when something was
/// committed since, this runs a PASSIVE checkpoint, which never blocks the writer or readers.
final class Checkpointer: Sendable {
    private struct State {
        var committed = false
        var closed = false
    }

    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// How long the thread waits between checkpoints while writes keep coming.
    static let interval = DispatchTimeInterval.milliseconds(50)

    /// Starts the thread, which owns `connection` from now on.
    init(connection: SQLiteConnection) {
        let thread = Thread { [self] in self.loop(connection) }
        thread.name = "tabstore-checkpoint"
        thread.start()
    }

    /// A batch committed: its pages are in the WAL.
    func committed() {
        let first = state.withLock { state -> Bool in
            defer { state.committed = true }
            return !state.committed
        }
        if first { wake.signal() }
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
                try? db.execute(closed ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(PASSIVE)")
            }
            if closed { break }
        }
        done.signal()
    }
}
