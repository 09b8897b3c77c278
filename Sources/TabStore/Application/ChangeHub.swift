import TabStoreAuth
import TabStoreDomain
import TabStoreStore
import TabStoreSupport

/// A user's customization as a GET serves it right after a commit: what followers are told.
package struct CustomizationState: Sendable, Equatable {
    package let revision: Int
    package let schemaVersion: Int
    /// The whole customization, one line of JSON.
    package let document: [UInt8]
    /// The change-feed event that carries it, built once for every stream of the user.
    package let event: [UInt8]

    package init(revision: Int, schemaVersion: Int, document: [UInt8]) {
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.document = document
        event = FeedEvent.customization(id: CustomizationTag.opaque(revision: revision, schemaVersion: schemaVersion), document: document)
    }
}

/// What a commit (or an erase, or a new schema version) made current for a user: followers get it under the
/// version each follows (docs/domain.md "Several app versions at once"), rendered once per version.
package struct Publication: Sendable {
    /// The stored customization; nil when there is none (an erase).
    package let record: CustomizationRecord?
    /// The app's current version, for followers that did not name one.
    package let current: SchemaIndex
    /// The app's minimum: a follower of an older version is let go.
    package let minimum: Int
    /// The state under `current`, when the publisher has it at hand (a write's answer).
    package var currentState: CustomizationState?

    package init(record: CustomizationRecord?, current: SchemaIndex, minimum: Int, currentState: CustomizationState? = nil) {
        self.record = record
        self.current = current
        self.minimum = minimum
        self.currentState = currentState
    }

    /// The state under `schema`.
    /// - Throws: when the stored bytes do not decode (damaged).
    package func state(under schema: SchemaIndex, _ key: UserKey) throws -> CustomizationState {
        if schema.version == current.version, let currentState { return currentState }
        let document = try CurrentCustomization.of(record, appId: key.appId, userId: key.userId, schema: schema).document
        return CustomizationState(revision: record?.revision ?? 0, schemaVersion: schema.version, document: document)
    }
}

/// Why a follower is let go without a change.
package enum FollowEnd: Sendable, Equatable {
    /// The server drains.
    case draining
    /// The app was deleted.
    case appDeleted
    /// The key that verified the follower's credentials (the app's signing secret) was replaced.
    case credentialsRevoked
    /// The named operator token that authorized the follower was revoked.
    case operatorTokenRevoked
    /// The version the follower named is below the app's minimum now.
    case schemaVersionRetired(minimum: Int)
}

/// Something waiting for a user's next revision: a long poll or a change-feed stream. Called from
/// whichever thread publishes; each implementation guards its own state and never blocks.
package protocol ChangeFollower: AnyObject, Sendable {
    /// The schema version the follower named (`?schemaVersion=`); nil: it follows the current one.
    var pinned: SchemaIndex? { get }
    /// A committed revision (or a schema change, or an erase) made `state` current.
    func changed(_ state: CustomizationState)
    /// Let go: the follower is no longer registered when this is called.
    func ended(_ reason: FollowEnd)
}

/// Who follows which user on this server. The writers publish after their commit returned, while holding
/// the user's write turn, so followers of one user learn of revisions in commit order and never of a
/// revision that is not durable yet. Memory is bounded: at most `maxPerUser` followers per user, and at
/// most `maxLongPolls` long polls in all (streams are bounded by the connection limit, being connections).
package final class ChangeHub: Sendable {
    package enum Kind: Sendable { case longPoll, stream }

    package enum Admission: Sendable, Equatable {
        case followed
        /// The user already has `maxPerUser` followers.
        case userLimit
        /// `maxLongPolls` long polls wait already.
        case serverLimit
        case draining
    }

    private struct Entry {
        let follower: any ChangeFollower
        let kind: Kind
        /// The app's signing secret that verified the follower's token (nil: the operator's token): let go when
        /// the secret is rotated, or found replaced after this replica missed notifications.
        let verifiedBy: [UInt8]?
        /// The named operator token that authorized the follower (its name's bytes): let go when it is revoked.
        let operatorToken: [UInt8]?
    }

    private struct Registry {
        var followers: [UserKey: [ObjectIdentifier: Entry]] = [:]
        var longPolls = 0
        var streams = 0
        var draining = false
    }

    /// Every follower, by user; all threads touch it under this lock, and call followers only after leaving it.
    private let registry = Locked(Registry())
    package let maxPerUser: Int
    package let maxLongPolls: Int

    package init(maxPerUser: Int, maxLongPolls: Int) {
        self.maxPerUser = maxPerUser
        self.maxLongPolls = maxLongPolls
    }

    /// Registers `follower` for `key`'s changes, unless a limit or the drain refuses it. `verifiedBy`: the app's
    /// signing secret that verified its caller's token (nil for the operator's token), so a rotation ends it;
    /// `operatorToken`: the named operator token that authorized it, so a revocation ends it.
    package func follow(_ key: UserKey, _ follower: any ChangeFollower, kind: Kind, verifiedBy: String?,
                        operatorToken: String? = nil) -> Admission {
        registry.withLock { registry in
            if registry.draining { return .draining }
            if kind == .longPoll, registry.longPolls >= maxLongPolls { return .serverLimit }
            let current = registry.followers[key]?.count ?? 0
            if current >= maxPerUser { return .userLimit }
            registry.followers[key, default: [:]][ObjectIdentifier(follower)] = Entry(
                follower: follower, kind: kind, verifiedBy: verifiedBy.map { Array($0.utf8) }, operatorToken: operatorToken.map { Array($0.utf8) })
            switch kind {
            case .longPoll: registry.longPolls += 1
            case .stream: registry.streams += 1
            }
            return .followed
        }
    }

    /// Forgets `follower` (it stopped waiting); nothing when it was not registered.
    package func unfollow(_ key: UserKey, _ follower: any ChangeFollower) {
        registry.withLock { registry in
            guard let removed = registry.followers[key]?.removeValue(forKey: ObjectIdentifier(follower)) else { return }
            if registry.followers[key]?.isEmpty == true { registry.followers[key] = nil }
            Self.uncount(removed.kind, in: &registry)
        }
    }

    /// Tells every follower of `key` about `state`. Call after the commit that made it, holding the user's
    /// write turn (`ApplicationServices.userLocks`), so two publications for one user never cross.
    package func publish(_ key: UserKey, _ publication: Publication) {
        let (followers, retired) = registry.withLock { registry -> ([any ChangeFollower], [any ChangeFollower]) in
            var followers: [any ChangeFollower] = []
            var retired: [any ChangeFollower] = []
            for (id, entry) in registry.followers[key] ?? [:] {
                if let pinned = entry.follower.pinned, pinned.version < publication.minimum {
                    registry.followers[key]?[id] = nil
                    Self.uncount(entry.kind, in: &registry)
                    retired.append(entry.follower)
                } else {
                    followers.append(entry.follower)
                }
            }
            if registry.followers[key]?.isEmpty == true { registry.followers[key] = nil }
            return (followers, retired)
        }
        for follower in retired { follower.ended(.schemaVersionRetired(minimum: publication.minimum)) }
        // One state per version followed, most often only the current one (made by the publisher already).
        var states: [Int: CustomizationState] = [:]
        for follower in followers {
            let schema = follower.pinned ?? publication.current
            if states[schema.version] == nil {
                // A stored document that does not decode: that follower sees the next change instead.
                guard let state = try? publication.state(under: schema, key) else { continue }
                states[schema.version] = state
            }
            follower.changed(states[schema.version]!)
        }
    }

    /// The users of `appId` someone follows (a schema change tells them their reconciled customization).
    package func followedUsers(of appId: Identifier) -> [UserKey] {
        registry.withLock { registry in registry.followers.keys.filter { $0.appId == appId } }
    }

    /// Lets go of every follower of the app's users (the app was deleted).
    package func appDeleted(_ appId: Identifier) {
        let gone = registry.withLock { registry -> [any ChangeFollower] in
            var gone: [any ChangeFollower] = []
            for key in Array(registry.followers.keys) where key.appId == appId {
                guard let removed = registry.followers.removeValue(forKey: key) else { continue }
                for entry in removed.values {
                    Self.uncount(entry.kind, in: &registry)
                    gone.append(entry.follower)
                }
            }
            return gone
        }
        for follower in gone { follower.ended(.appDeleted) }
    }

    /// Lets go of every follower of the app's users whose token the app's previous signing secret verified (the
    /// operator's go on). Call after the new secret is stored and the app's cached entry dropped: a follower
    /// registered later checks the secret itself (`APIServices.requireCredentialsCurrent`).
    package func secretRotated(_ appId: Identifier) {
        revoke(appId) { _ in true }
    }

    /// Lets go of every follower of the app's users whose token a secret other than `current` verified: after
    /// this replica missed notifications (its listener reconnected), a rotation elsewhere may have gone unheard.
    package func secretIsNow(_ current: String, of appId: Identifier) {
        let bytes = Array(current.utf8)
        revoke(appId) { !Crypto.constantTimeEqual($0, bytes) }
    }

    /// Lets go (`operatorTokenRevoked`) of every follower the named operator token authorized (compared as bytes).
    package func operatorTokenRevoked(_ name: String) {
        let bytes = Array(name.utf8)
        endOperatorFollowers { $0 == bytes }
    }

    /// Lets go of every follower a named operator token authorized that is not among `current` (after this
    /// replica missed notifications, a revocation elsewhere may have gone unheard).
    package func operatorTokensAre(_ current: [String]) {
        let kept = Set(current.map { Array($0.utf8) })
        endOperatorFollowers { !kept.contains($0) }
    }

    /// Whether some follower was authorized by a named operator token.
    package var hasOperatorFollowers: Bool {
        registry.withLock { registry in registry.followers.values.contains { $0.values.contains { $0.operatorToken != nil } } }
    }

    private func endOperatorFollowers(_ revoked: ([UInt8]) -> Bool) {
        letGo(.operatorTokenRevoked, users: { _ in true }) { entry in entry.operatorToken.map(revoked) ?? false }
    }

    /// Every user someone follows, of every app (after missed notifications, each is read again).
    package var allFollowedUsers: [UserKey] { registry.withLock { Array($0.followers.keys) } }

    /// Ends (`credentialsRevoked`) the app's followers whose verifying secret `revoked` says is no longer valid.
    private func revoke(_ appId: Identifier, _ revoked: ([UInt8]) -> Bool) {
        letGo(.credentialsRevoked, users: { $0.appId == appId }) { entry in entry.verifiedBy.map(revoked) ?? false }
    }

    /// Unregisters the followers of the users `users` picks whose entry `matches`, then tells each `reason`
    /// (outside the lock).
    private func letGo(_ reason: FollowEnd, users: (UserKey) -> Bool, _ matches: (Entry) -> Bool) {
        let gone = registry.withLock { registry -> [any ChangeFollower] in
            var gone: [any ChangeFollower] = []
            for key in Array(registry.followers.keys) where users(key) {
                for (id, entry) in registry.followers[key] ?? [:] where matches(entry) {
                    registry.followers[key]?[id] = nil
                    Self.uncount(entry.kind, in: &registry)
                    gone.append(entry.follower)
                }
                if registry.followers[key]?.isEmpty == true { registry.followers[key] = nil }
            }
            return gone
        }
        for follower in gone { follower.ended(reason) }
    }

    /// Lets go of every long poll (they answer at once) and refuses new followers: the server drains. Streams
    /// are ended by the event loops, which send them their last event.
    package func drain() {
        let polls = registry.withLock { registry -> [any ChangeFollower] in
            registry.draining = true
            var polls: [any ChangeFollower] = []
            for key in Array(registry.followers.keys) {
                for (id, entry) in registry.followers[key] ?? [:] where entry.kind == .longPoll {
                    registry.followers[key]?[id] = nil
                    registry.longPolls -= 1
                    polls.append(entry.follower)
                }
                if registry.followers[key]?.isEmpty == true { registry.followers[key] = nil }
            }
            return polls
        }
        for poll in polls { poll.ended(.draining) }
    }

    package var isDraining: Bool { registry.withLock { $0.draining } }

    /// Open streams and waiting long polls (metrics).
    package var counts: (streams: Int, longPolls: Int) { registry.withLock { ($0.streams, $0.longPolls) } }

    private static func uncount(_ kind: Kind, in registry: inout Registry) {
        switch kind {
        case .longPoll: registry.longPolls -= 1
        case .stream: registry.streams -= 1
        }
    }
}
