import Dispatch
import TabStoreApplication
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// Telling followers about changes that are not a user's own write: an erase, a new schema version.
extension APIServices {
    /// Erases what is stored about `key`'s user in its app, taking the user's write turn so the followers'
    /// "empty at revision 0" never crosses a write's publication; tells them when something was erased.
    /// - Returns: whether anything was erased.
    /// - Throws: storage errors.
    func erase(_ key: UserKey, schema: SchemaIndex?) async throws -> Bool {
        try await userLocks.withLock(key) { () async throws -> Bool in
            let erased = try await store.eraseUser(userId: key.userId.text, appId: key.appId.text)
            if erased, let schema {
                let minimum = apps.cached(key.appId)?.app.minimumSchemaVersion ?? 1
                changes.publish(key, Publication(record: nil, current: schema, minimum: minimum))
            }
            return erased
        }
    }

    /// For a follower registered (`ChangeHub.follow`) after its caller was authorized: 401 when the app's
    /// signing secret is no longer the one that verified the caller's token. A rotation stores the secret, drops
    /// the cached app, then ends the registered followers; one registered after that is caught here, since the
    /// app read now is the rotated one.
    /// - Throws: `APIError` 401 (the secret was rotated, or the app is gone).
    func requireCredentialsCurrent(_ context: RouteContext, _ appId: Identifier) async throws {
        guard let key = context.credentialsKey else { return }
        let current = try await apps.entry(appId)?.app.signingSecret
        guard let current, Crypto.constantTimeEqual(Array(current.utf8), Array(key.utf8)) else { throw APIError.credentialsRevoked }
    }

    /// After a new schema version: every followed user of the app gets their customization reconciled with it
    /// (its ETag names the new version). Runs in the background, one user's write turn at a time, so the
    /// registration answers at once and no publication crosses a write's.
    func republish(appId: Identifier) {
        republish(changes.followedUsers(of: appId))
    }

    /// Publishes each user's current customization (read again) to their followers, one write turn at a time.
    func republish(_ users: [UserKey]) {
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
