import Dispatch
import TabStoreStore
import TabStoreSupport

/// Whether the database currently accepts writes, as last seen by the writer.
///
/// A full disk, a file or folder that became read-only, an I/O error or corruption make every write fail
/// while reads may still work, so a read probe alone would keep reporting "ready". The writer records
/// such a failure here and clears it on its next successful commit; `/readyz` reports it.
package final class StorageHealth: Sendable {
    /// The failure that made the database unwritable, with when it happened (monotonic nanoseconds).
    package struct Failure: Sendable {
        package let error: StorageError
        package let at: UInt64
    }

    private let failure = Locked<Failure?>(nil)

    package init() {}

    /// The last write failure, nil once a later commit succeeded.
    package var current: Failure? { failure.withLock { $0 } }

    /// Records `error` when it means the database cannot take writes; other errors say nothing about health.
    func record(_ error: any Error) {
        guard let error = error as? StorageError, error.isUnavailable else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        failure.withLock { $0 = Failure(error: error, at: now) }
    }

    /// A commit succeeded: the database takes writes again.
    func recovered() { failure.withLock { $0 = nil } }
}
