import TabStoreStore
import TabStoreSupport

/// Replicas on one shared database (PostgreSQL): what another replica committed reaches this one's caches and
/// followers through the backend's change notifications (`TabStoreBackend.observeChanges`), so a rotated secret
/// stops old tokens here too, a new schema serves here at once, and a stream here sees a write made there.
extension ApplicationServices {
    /// Subscribes to the backend's notifications (a no-op for a backend no other process writes).
    package func observeReplicas() {
        let services = self
        store.observeChanges { change in services.replicaChanged(change) }
    }

    package func replicaChanged(_ change: StoreChange) {
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
        case .operatorTokenRevoked(let name):
            changes.operatorTokenRevoked(name)
        case .unknown:
            apps.invalidateAll()
            catchUp()
        }
    }

    /// After this replica missed notifications (its listener lost the database and listens again), what it
    /// would have been told is read from the database instead: every followed app again (deleted: its followers
    /// are let go; its secret replaced: followers verified by the old one end with 401 / `token-expired`), then
    /// every followed user's customization, published to its followers, which skip what they have already.
    /// Runs in the background; no stream misses a revision committed while the notifications were lost.
    package func catchUp() {
        let users = changes.allFollowedUsers
        logger.info("notifications_resumed", [("followedUsers", .integer(users.count))])
        guard !users.isEmpty else { return }
        Task {
            // A named operator token revoked meanwhile: its followers end.
            if changes.hasOperatorFollowers {
                do {
                    changes.operatorTokensAre(try await store.operatorTokens().map(\.name))
                } catch {
                    logger.warning("catch_up_failed", [("operatorTokens", .bool(true)), ("error", .string(String(describing: error)))])
                }
            }
            var apps: [Identifier: Bool] = [:]
            for key in users where apps[key.appId] == nil {
                do {
                    if let entry = try await self.apps.entry(key.appId) {
                        changes.secretIsNow(entry.app.signingSecret, of: key.appId)
                        apps[key.appId] = true
                    } else {
                        changes.appDeleted(key.appId)
                        apps[key.appId] = false
                    }
                } catch {
                    apps[key.appId] = true  // read again below; a database still away leaves it to the next change
                    logger.warning("catch_up_failed", [("appId", .string(key.appId.text)), ("error", .string(String(describing: error)))])
                }
            }
            republish(users.filter { apps[$0.appId] == true })
        }
    }
}
