import Dispatch
import TabStoreStore
import TabStoreSupport

/// Where a read that may lag goes (`TAB_SERVER_DATABASE_READ_URL`): to a hot standby, unless the standby may
/// not have replayed a change this replica knows of for the user yet: one it committed itself, or one another
/// replica committed that it was notified of. Each is remembered as the primary's WAL position after the commit
/// (`pg_current_wal_lsn()`, read after the commit or after the notification arrived, so at or past the commit
/// record); a standby whose `pg_last_wal_replay_lsn()` is below the user's position is not asked, the primary
/// is. What a client named (the revision in its `If-None-Match`) is checked against the standby's row too.
///
/// Positions are kept per user until the standby is seen past them; past `maxEntries` they collapse into one
/// floor for everyone (conservative: more reads go to the primary, none older).
final class PostgresReadRouting: Sendable {
    private struct State {
        var positions: [UserKey: UInt64] = [:]
        /// Every user's position at least (changes missed before the listener listened, or collapsed entries).
        var floor: UInt64 = 0
        /// Whether the listener has listened once: before, no standby serves (changes would go unheard).
        var listening = false
        /// The standby's replay position last seen.
        var replayed: UInt64 = 0
        var standbyReads = 0
        var primaryReads = 0
        /// When the standby last failed (monotonic nanoseconds): it is not asked again for `restSeconds`.
        var failedAt: UInt64?
        /// Reads that found the read URL on another cluster (answered by the primary).
        var foreignClusterReads = 0
    }

    /// Seconds a standby that failed is left alone (the primary answers meanwhile).
    static let restSeconds = 5.0

    struct UserKey: Hashable, Sendable {
        let appId: String
        let userId: String
    }

    static let maxEntries = 100_000
    private let state = Locked(State())
    /// The primary's `system_identifier` (`pg_control_system()`): a server under the read URL that reports another
    /// is a copy of some other cluster (a mistyped host), whose rows are never served.
    let primarySystem: String

    init(primarySystem: String) {
        self.primarySystem = primarySystem
    }

    /// The position a standby must have replayed to serve this user: none can (`.max`) before this replica listens
    /// for other replicas' changes, since it would not hear of them.
    func required(appId: String, userId: String) -> UInt64 {
        state.withLock { $0.listening ? max($0.floor, $0.positions[UserKey(appId: appId, userId: userId)] ?? 0) : .max }
    }

    /// Whether the listener has listened (reads may go to the standby).
    var isListening: Bool { state.withLock { $0.listening } }

    /// The listener listens (again), and the primary is at `position`: nothing committed before was delivered, so no
    /// standby serves a read below it.
    func listening(from position: UInt64) {
        state.withLock { state in
            state.floor = max(state.floor, position)
            state.listening = true
        }
    }

    /// A change of the user's committed at or before `position` on the primary.
    func committed(appId: String, userId: String, position: UInt64) {
        state.withLock { state in
            let key = UserKey(appId: appId, userId: userId)
            state.positions[key] = max(state.positions[key] ?? 0, position)
            guard state.positions.count > Self.maxEntries else { return }
            let replayed = state.replayed
            state.positions = state.positions.filter { $0.value > replayed }
            if state.positions.count > Self.maxEntries / 2 {
                state.floor = max(state.floor, state.positions.values.max() ?? 0)
                state.positions = [:]
            }
        }
    }

    func observed(replayed: UInt64, servedByStandby: Bool) {
        state.withLock { state in
            state.replayed = max(state.replayed, replayed)
            if servedByStandby { state.standbyReads += 1 } else { state.primaryReads += 1 }
        }
    }

    /// The standby failed (or did not answer in its half of the bound): the primary answers for `restSeconds`.
    func fellBack(standbyFailed: Bool) {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            state.primaryReads += 1
            if standbyFailed { state.failedAt = now }
        }
    }

    /// A read found the read URL on another cluster: the primary answers, and `/metrics` counts it.
    func foundForeignCluster() {
        state.withLock { $0.foreignClusterReads += 1 }
        fellBack(standbyFailed: true)
    }

    /// Whether the standby may be asked now (it did not fail within `restSeconds`).
    var standbyUsable: Bool {
        guard let failedAt = state.withLock({ $0.failedAt }) else { return true }
        return DispatchTime.now().uptimeNanoseconds &- failedAt > UInt64(Self.restSeconds * 1e9)
    }

    var gauges: [BackendGauge] {
        let (standby, primary, foreign) = state.withLock { ($0.standbyReads, $0.primaryReads, $0.foreignClusterReads) }
        let help = "Customization reads that may lag (GET with TAB_SERVER_DATABASE_READ_URL set), by the server that answered."
        return [
            BackendGauge(
                name: "tabstore_postgres_lagging_reads_total", help: help, labels: [("served_by", "standby")], value: Double(standby), counter: true),
            BackendGauge(
                name: "tabstore_postgres_lagging_reads_total", help: help, labels: [("served_by", "primary")], value: Double(primary), counter: true),
            BackendGauge(
                name: "tabstore_postgres_read_url_other_cluster_total",
                help: "Reads whose TAB_SERVER_DATABASE_READ_URL server belonged to another cluster (another system identifier); the primary answered.",
                value: Double(foreign), counter: true),
        ]
    }
}

extension PostgresStore {
    /// The primary's WAL position now, as a number (`pg_lsn` minus `0/0`).
    static let currentPosition = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"

    /// The cluster a server belongs to: every standby made from a primary (`pg_basebackup`) reports the primary's.
    static let systemIdentifier = "SELECT system_identifier::text FROM pg_control_system()"

    /// The row and the standby's replay position (NULL: not in recovery, i.e. a primary, which has everything it
    /// committed) in one statement.
    static let standbyRead = """
        SELECT c.revision, c.schema_version, c.document, c.updated_at, (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint
        FROM (SELECT 1) AS one LEFT JOIN customizations AS c ON c.app_id = $1 AND c.user_id = $2
        """

    /// A read that may lag: from the standby when it has replayed every change this replica knows of for the
    /// user and holds at least `atLeast`; otherwise (or when it fails) from the primary.
    package func customizationForRead(appId: String, userId: String, atLeast revision: Int?) async throws -> CustomizationRecord? {
        guard let readPool, let routing else { return try await customization(appId: appId, userId: userId) }
        guard routing.standbyUsable else {
            routing.fellBack(standbyFailed: false)
            return try await customization(appId: appId, userId: userId)
        }
        let required = routing.required(appId: appId, userId: userId)
        let rows: PostgresRows
        let system: String
        do {
            (rows, system) = try await readPool.run { db in
                // The server's cluster, asked once per connection (it reads the control file).
                if db.systemIdentifier == nil { db.systemIdentifier = try db.query(Self.systemIdentifier).text(0, 0) }
                return (try db.query(Self.standbyRead, [.text(appId), .text(userId)]), db.systemIdentifier ?? "")
            }
        } catch {
            routing.fellBack(standbyFailed: true)  // the standby does not answer: the primary does
            return try await customization(appId: appId, userId: userId)
        }
        guard system == routing.primarySystem else {
            // Not a copy of this cluster (the read URL names another database's server): its rows are never served.
            routing.foundForeignCluster()
            return try await customization(appId: appId, userId: userId)
        }
        let replayed = rows.isNull(0, 4) ? UInt64.max : UInt64(max(0, rows.int(0, 4)))
        let record =
            rows.isNull(0, 0)
            ? nil
            : CustomizationRecord(
                appId: appId, userId: userId, revision: rows.int(0, 0), schemaVersion: rows.int(0, 1),
                                                                   document: rows.bytes(0, 2), updatedAt: rows.text(0, 3))
        let fresh = replayed >= required && (record?.revision ?? 0) >= (revision ?? 0)
        routing.observed(replayed: replayed == .max ? 0 : replayed, servedByStandby: fresh)
        return fresh ? record : try await customization(appId: appId, userId: userId)
    }

    /// After a commit that changed users' customizations: its position, for `customizationForRead`.
    static func notePositions(_ db: PostgresConnection, routing: PostgresReadRouting?) {
        defer { db.changedUsers = [] }
        guard let routing, !db.changedUsers.isEmpty else { return }
        // Unknown (the read failed after the commit): those users' reads go to the primary from now on.
        let position = (try? db.query(currentPosition).scalarInt).map { UInt64(max(0, $0)) } ?? .max
        for user in db.changedUsers { routing.committed(appId: user.appId, userId: user.userId, position: position) }
    }
}
