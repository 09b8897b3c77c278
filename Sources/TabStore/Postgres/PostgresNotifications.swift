import CPostgres
import Dispatch
import Foundation
import Glibc
import TabStoreStore
import TabStoreSupport

/// Replicas tell each other what they committed with `NOTIFY` on one channel, sent inside the write's
/// transaction (PostgreSQL delivers it only once that commits, and not at all when it rolls back).
///
/// A payload is `<kind><sender>|<app byte count>|<app id><user id>`: kind `c` customization, `a` app created,
/// `r` signing secret rotated, `s` schema, `d` app deleted, `o` operator token revoked (its name in the app's place); the sender is the writing
/// process's random id, so a replica skips its own
/// changes (its caches and followers already know). Ids are UTF-8 without NUL and control characters, and at
/// most 128 + 256 bytes, well inside the 8000-byte payload limit.
package enum PostgresNotifications {
    package static let channel = "tabstore_changes"

    static func payload(_ change: StoreChange, sender: String) -> String {
        switch change {
        case .customization(let appId, let userId): "c\(sender)|\(appId.utf8.count)|\(appId)\(userId)"
        case .app(let appId): "a\(sender)|\(appId.utf8.count)|\(appId)"
        case .secretRotated(let appId): "r\(sender)|\(appId.utf8.count)|\(appId)"
        case .schema(let appId): "s\(sender)|\(appId.utf8.count)|\(appId)"
        case .appDeleted(let appId): "d\(sender)|\(appId.utf8.count)|\(appId)"
        case .operatorTokenRevoked(let name): "o\(sender)|\(name.utf8.count)|\(name)"
        case .unknown: "u\(sender)|0|"
        }
    }

    /// The change and its sender, nil for a payload this version does not know.
    static func parse(_ payload: [UInt8]) -> (change: StoreChange, sender: String)? {
        guard let kind = payload.first else { return nil }
        let fields = payload.dropFirst().split(separator: UInt8(ascii: "|"), maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, let count = Int(String(decoding: fields[1], as: UTF8.self)), count >= 0, count <= fields[2].count else { return nil }
        let sender = String(decoding: fields[0], as: UTF8.self)
        let ids = fields[2]
        let appId = String(decoding: ids.prefix(count), as: UTF8.self)
        let userId = String(decoding: ids.dropFirst(count), as: UTF8.self)
        switch kind {
        case UInt8(ascii: "c"): return (.customization(appId: appId, userId: userId), sender)
        case UInt8(ascii: "a"): return (.app(appId: appId), sender)
        case UInt8(ascii: "r"): return (.secretRotated(appId: appId), sender)
        case UInt8(ascii: "s"): return (.schema(appId: appId), sender)
        case UInt8(ascii: "d"): return (.appDeleted(appId: appId), sender)
        case UInt8(ascii: "o"): return (.operatorTokenRevoked(name: appId), sender)
        case UInt8(ascii: "u"): return (.unknown, sender)
        default: return nil
        }
    }

    /// Queues the notification in `db`'s open transaction.
    static func notify(_ db: PostgresConnection, _ change: StoreChange, sender: String) throws {
        try db.query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload(change, sender: sender))])
    }
}

/// One connection that `LISTEN`s on its own thread and hands other replicas' changes to the observers.
/// When the connection breaks (a database restart) it reconnects every second, and says `.unknown` once it
/// listens again, because what was committed meanwhile was never delivered. A connection that stays open but
/// stopped carrying anything (a stuck proxy or pooler, a backend that no longer answers) is found by a query
/// every `probeSeconds` without a notification, bounded by the same seconds: one that does not answer is dropped
/// and replaced like a broken one.
final class PostgresListener: Sendable {
    private struct State {
        var handlers: [@Sendable (StoreChange) -> Void] = []
        var started = false
        var stopped = false
    }

    private let conninfo: String
    private let sender: String
    private let probeSeconds: Double
    /// Told the primary's position after other replicas' customization changes arrive (and after a reconnect).
    private let routing: PostgresReadRouting?
    private let state = Locked(State())

    init(conninfo: String, sender: String, probeSeconds: Double = 5, routing: PostgresReadRouting? = nil) {
        self.routing = routing
        self.conninfo = conninfo
        self.sender = sender
        self.probeSeconds = max(0.5, probeSeconds)
    }

    /// Adds an observer; the first one starts the listening thread.
    func add(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        let start = state.withLock { state -> Bool in
            state.handlers.append(handler)
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        guard start else { return }
        NamedThread.start("tabstore-listen") { [self] in self.run() }
    }

    /// The thread ends within half a second.
    func stop() { state.withLock { $0.stopped = true } }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func deliver(_ change: StoreChange) {
        for handler in state.withLock({ $0.handlers }) { handler(change) }
    }

    private func run() {
        var listenedBefore = false
        while !isStopped {
            guard let db = try? PostgresConnection(conninfo: conninfo), (try? db.execute("LISTEN \(PostgresNotifications.channel)")) != nil else {
                for _ in 0..<2 where !isStopped { usleep(500_000) }
                continue
            }
            // What was committed before this LISTEN was never delivered (at start: everything before it; after a
            // reconnect: what came meanwhile): no standby serves a read until it is past the primary's position now.
            routing?.listening(from: (try? db.query(PostgresStore.currentPosition).scalarInt).map { UInt64(max(0, $0)) } ?? .max)
            if listenedBefore { deliver(.unknown) }
            listenedBefore = true
            db.statementDeadline = probeSeconds
            var quiet: UInt64 = 0
            let probeEvery = UInt64(probeSeconds * 1e9)
            while !isStopped {
                let started = DispatchTime.now().uptimeNanoseconds
                guard let notifications = db.waitForNotifications(timeoutMilliseconds: 500) else { break }  // broken: reconnect
                var changes: [StoreChange] = []
                for payload in notifications {
                    guard let (change, from) = PostgresNotifications.parse(payload), from != sender else { continue }
                    changes.append(change)
                }
                notePosition(of: changes, on: db)
                for change in changes { deliver(change) }
                quiet = notifications.isEmpty ? quiet &+ (DispatchTime.now().uptimeNanoseconds &- started) : 0
                if quiet >= probeEvery {
                    quiet = 0
                    // Notifications read meanwhile stay queued in libpq for the next wait.
                    guard (try? db.execute("SELECT 1")) != nil else { break }  // no answer within the bound: reconnect
                }
            }
        }
    }
}

extension PostgresListener {
    /// The primary's position now is at or past the commits of `changes` (delivered after their commits): a
    /// standby read of those users waits for it (`PostgresReadRouting`). Before the changes are delivered, so a
    /// follower told of a change never reads the standby's older row.
    private func notePosition(of changes: [StoreChange], on db: PostgresConnection) {
        guard let routing else { return }
        let users = changes.compactMap { change -> (String, String)? in
            if case .customization(let appId, let userId) = change { return (appId, userId) }
            return nil
        }
        guard !users.isEmpty else { return }
        let position = (try? db.query(PostgresStore.currentPosition).scalarInt).map { UInt64(max(0, $0)) } ?? .max
        for (appId, userId) in users { routing.committed(appId: appId, userId: userId, position: position) }
    }
}

extension PostgresConnection {
    /// Waits up to `timeoutMilliseconds` for notifications; nil when the connection broke.
    func waitForNotifications(timeoutMilliseconds: Int32) -> [[UInt8]]? {
        let socket = PQsocket(connection)
        guard socket >= 0 else { return nil }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        if ready < 0 && errno != EINTR { return nil }
        guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else { return nil }
        var payloads: [[UInt8]] = []
        while let notification = PQnotifies(connection) {
            if let extra = notification.pointee.extra {
                payloads.append(Array(String(cString: extra).utf8))
            }
            PQfreemem(notification)
        }
        return payloads
    }
}
