import Dispatch
import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// Telling followers about changes that are not a user's own write: an erase, a new schema version.
extension ApplicationServices {
    /// Erases what is stored about `key`'s user in its app, taking the user's write turn so the followers'
    /// "empty at revision 0" never crosses a write's publication; tells them when something was erased.
    /// - Returns: whether anything was erased.
    /// - Throws: storage errors.
    package func erase(_ key: UserKey, schema: SchemaIndex?) async throws -> Bool {
        try await userLocks.withLock(key) { () async throws -> Bool in
            let erased = try await store.eraseUser(userId: key.userId.text, appId: key.appId.text)
            if erased, let schema {
                let minimum = apps.cached(key.appId)?.app.minimumSchemaVersion ?? 1
                changes.publish(key, Publication(record: nil, current: schema, minimum: minimum))
            }
            return erased
        }
    }

    /// After a new schema version: every followed user of the app gets their customization reconciled with it
    /// (its ETag names the new version). Runs in the background, one user's write turn at a time, so the
    /// registration answers at once and no publication crosses a write's.
    package func republish(appId: Identifier) {
        republish(changes.followedUsers(of: appId))
    }

    /// Publishes each user's current customization (read again) to their followers, one write turn at a time.
    package func republish(_ users: [UserKey]) {
        guard !users.isEmpty else { return }
        Task {
            // The users whose read the database did not answer within the bound (busy, or just back) are asked
            // again together, after 1, 2 and 4 s, so one user's wait never holds back the others; their followers
            // would otherwise miss this version until the user's next change.
            var pending = users
            for attempt in 0..<4 where !pending.isEmpty {
                if attempt > 0 { try? await Task.sleep(for: .seconds(1 << (attempt - 1))) }
                var unanswered: [UserKey] = []
                for key in pending {
                    do {
                        // Each user's read gets the whole database bound, not what is left of the request that began it.
                        try await RequestDeadline.$arrivedAt.withValue(DispatchTime.now().uptimeNanoseconds) { try await republishOne(key) }
                    } catch {
                        // A damaged row is not asked again: its followers see the user's next change.
                        let retry = attempt < 3 && (error as? StorageError)?.isUnavailable == true
                        logger.warning("republish_failed", [("appId", .string(key.appId.text)), ("error", .string(String(describing: error))),
                                                            ("retrying", .bool(retry))])
                        if retry { unanswered.append(key) }
                    }
                }
                pending = unanswered
            }
        }
    }

    /// Reads `key`'s app and customization again and publishes them, in the user's write turn.
    private func republishOne(_ key: UserKey) async throws {
        try await userLocks.withLock(key) { () async throws -> Void in
            guard let entry = try await apps.entry(key.appId), let schema = entry.schema else { return }
            let record = try await store.customization(appId: key.appId.text, userId: key.userId.text)
            changes.publish(key, Publication(record: record, current: schema, minimum: entry.app.minimumSchemaVersion))
        }
    }
}
