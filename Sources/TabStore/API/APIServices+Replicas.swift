import TabStoreStorage
import TabStoreSupport

/// Replicas on one shared database (PostgreSQL): what another replica committed reaches this one's caches and
/// followers through the backend's change notifications (`TabStoreBackend.observeChanges`), so a rotated secret
/// stops old tokens here too, a new schema serves here at once, and a stream here sees a write made there.
extension APIServices {
    /// Subscribes to the backend's notifications (a no-op for a backend no other process writes).
    func observeReplicas() {
        let services = self
        store.observeChanges { change in services.replicaChanged(change) }
    }

    func replicaChanged(_ change: StoreChange) {
        switch change {
        case .customization(let appId, let userId):
            let key = UserKey(appId: Identifier(appId), userId: Identifier(userId))
            if changes.followedUsers(of: key.appId).contains(key) { republish([key]) }
        case .app(let appId):
            apps.invalidate(Identifier(appId))
        case .secretRotated(let appId):
            // The token cache checks each hit against the app's cached secret: reloading the app retires old tokens;
            // streams and long polls the old secret authorized end, as on the replica that rotated it.
            apps.invalidate(Identifier(appId))
            changes.secretRotated(Identifier(appId))
        case .schema(let appId):
            apps.invalidate(Identifier(appId))
            republish(appId: Identifier(appId))
        case .appDeleted(let appId):
            apps.invalidate(Identifier(appId))
            historyPages.removeAll { $0.hasFirstPart(appId) }
            changes.appDeleted(Identifier(appId))
        case .unknown:
            apps.invalidateAll()
        }
    }
}
