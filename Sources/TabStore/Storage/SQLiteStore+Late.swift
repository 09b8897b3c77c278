import TabStoreStore
import TabStoreSupport

/// The observers of a backend's changes (`TabStoreBackend.observeChanges`).
final class ChangeObservers: Sendable {
    private let handlers = Locked<[@Sendable (StoreChange) -> Void]>([])

    func add(_ handler: @escaping @Sendable (StoreChange) -> Void) { handlers.withLock { $0.append(handler) } }

    func tell(_ change: StoreChange) {
        for handler in handlers.withLock({ $0 }) { handler(change) }
    }
}

/// A write whose caller's bound passed while the writer ran it (a disk that stopped answering) may commit
/// after its caller got 503. The write's own caches follow the database already (its `afterCommit` ran); the
/// API is told here, as of another replica's commit, so the user's followers get the revision too.
extension SQLiteStore {
    package func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        observers.add(handler)
    }

    /// Changes the writes' bound (`Configuration.writeTimeout`) from now on: for tests, which make their data
    /// with headroom on a loaded machine, then test the bound.
    package func setWriteTimeout(_ seconds: Double?) { writer.setBound(seconds) }

    /// Called on the writer thread by a write that committed late.
    func changed(_ change: StoreChange) { observers.tell(change) }
}
