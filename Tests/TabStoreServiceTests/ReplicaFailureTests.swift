import Foundation
import Glibc
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// A client of a server on a port (a `tab-server` process).
struct PortClient: TestClient {
    let port: Int
    let admin: String

    func send(_ request: TestRequest) async throws -> TestResponse {
        let port = self.port
        return try await offPool {
            let client = try RawClient(port: port, timeout: 30)
            guard let response = client.request(request) else { throw TestFailure("request \(request.method) \(request.target)") }
            return response
        }
    }
}

/// Failures under load with replicas on PostgreSQL: a replica killed, the database restarted.
@Suite("Replicas under failures", .serialized, .enabled(if: PostgresTestCluster.shared != nil, "no PostgreSQL binaries"))
struct ReplicaFailureTests {
    static let tabs = 60
    static let schema =
        #"{"items": [{"id": "keep", "title": "Keep"}, "# + (0..<tabs).map { #"{"id": "t\#($0)", "title": "T\#($0)"}"# }.joined(separator: ",") + "]}"

    static func hide(_ tab: Int) -> String { #"{"operations": [{"op": "setSidebarVisibility", "tab": "t\#(tab)", "visibility": "hidden"}]}"# }

    /// Each user's writer hides its tabs one by one through the clients in turn until `stop` or the last tab;
    /// what was acknowledged (200) is returned per user, with every status seen.
    static func load(_ clients: [any TestClient], _ creds: Credentials.App, users: [String], until stop: Locked<Bool>, count: Locked<Int>)
        async throws -> (acknowledged: [String: [Int]], statuses: [Int: Int]) {
        try await withThrowingTaskGroup(of: (String, [Int], [Int: Int]).self) { group in
            for (number, user) in users.enumerated() {
                group.addTask {
                    var acknowledged: [Int] = []
                    var statuses: [Int: Int] = [:]
                    var turn = number
                    var tab = 0
                    // A tab is retried (through the next client) until a 200 acknowledges it.
                    while tab < tabs, !stop.withLock({ $0 }) {
                        turn += 1
                        let request = TestRequest.patch(creds.userPath(user) + "/customization").bearer(creds.token(for: user)).json(hide(tab))
                        if let response = try? await clients[turn % clients.count].send(request) {
                            statuses[response.status, default: 0] += 1
                            if response.status == 200 {
                                acknowledged.append(tab)
                                count.withLock { $0 += 1 }
                                tab += 1
                            }
                        } else {
                            statuses[0, default: 0] += 1  // no answer (the replica is gone): not acknowledged
                        }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    return (user, acknowledged, statuses)
                }
            }
            var acknowledged: [String: [Int]] = [:]
            var statuses: [Int: Int] = [:]
            for try await (user, tabs, seen) in group {
                acknowledged[user] = tabs
                statuses.merge(seen, uniquingKeysWith: +)
            }
            return (acknowledged, statuses)
        }
    }

    /// Waits (up to 30 s, however loaded the machine is) until `count` reached `target`.
    static func waitFor(_ count: Locked<Int>, atLeast target: Int) async throws {
        let deadline = Date().addingTimeInterval(30)
        while count.withLock({ $0 }) < target, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Every acknowledged tab is hidden, and the revisions are contiguous (the history has each once).
    static func verify(_ client: any TestClient, _ creds: Credentials.App, _ acknowledged: [String: [Int]]) async throws {
        for (user, tabs) in acknowledged {
            let read = try await client.send(.get(creds.userPath(user) + "/customization").bearer(creds.token(for: user)))
            guard case .object(let hidden)? = read.field("tabs"), case .integer(let revision)? = read.field("revision") else {
                Issue.record("unreadable: \(read.text)"); continue
            }
            for tab in tabs { #expect(hidden["t\(tab)"] != nil, "\(user): acknowledged t\(tab) is lost") }
            #expect(revision >= tabs.count)
            let history = try await client.send(.get(creds.userPath(user) + "/customization/history?limit=100").bearer(creds.token(for: user)))
            guard case .array(let items)? = history.field("items") else { Issue.record("no history"); continue }
            let revisions = items.compactMap { item -> Int? in
                guard case .object(let object) = item, case .integer(let number)? = object["revision"] else { return nil }
                return number
            }
            #expect(revision >= 1 && revisions == Array((1...max(revision, 1)).reversed()), "\(user): \(revisions)")
        }
    }

    @Test("one of three tab-server processes killed with SIGKILL under load: no acknowledged write is lost")
    func replicaKilled() async throws {
        guard TabServerProcess.binaryExists else { Issue.record("build tab-server first (swift build)"); return }
        let url = try PostgresTestCluster.shared!.freshDatabase()
        let admin = "replica-admin-token-0123456789"
        let folders = (0..<3).map { _ in TemporaryDirectory() }
        var servers: [ServingProcess] = []
        for folder in folders {
            servers.append(try await ServingProcess(["--port", "0", "--data-dir", folder.path, "--threads", "1", "--access-log", "false",
                                                     "--database-url", url, "--admin-token", admin, "--database-connections", "4"]))
        }
        let clients: [any TestClient] = servers.map { PortClient(port: $0.port, admin: admin) }
        let creds = try await Credentials.App.register(on: clients[0], id: "app.crash", schema: Self.schema)
        let stop = Locked(false)
        let count = Locked(0)
        let users = (0..<6).map { "user\($0)" }
        async let outcome = Self.load(clients, creds, users: users, until: stop, count: count)
        try await Self.waitFor(count, atLeast: 20)
        kill(servers[1].process.processIdentifier, SIGKILL)
        let atKill = count.withLock { $0 }
        try await Self.waitFor(count, atLeast: atKill + 20)
        stop.withLock { $0 = true }
        let (acknowledged, statuses) = try await outcome
        #expect(acknowledged.values.map(\.count).reduce(0, +) >= atKill + 20, "\(statuses)")
        #expect(Set(statuses.keys).isSubset(of: [0, 200]), "\(statuses)")
        try await Self.verify(clients[2], creds, acknowledged)
        _ = try await servers[1].waitForExit(within: 5)
        try await servers[0].stop()
        try await servers[2].stop()
    }

    @Test("the database restarted under load: 503 while it is down, 200 after, nothing acknowledged lost")
    func databaseRestarted() async throws {
        let cluster = try PostgresTestCluster.dedicated()
        let url = try cluster.freshDatabase()
        let replicas = try (0..<2).map { _ in try LiveService(adjust: { $0.databaseURL = url; $0.databaseConnections = 4 }) }
        do {
            let creds = try await Credentials.App.register(on: replicas[0], id: "app.restart", schema: Self.schema)
            let stop = Locked(false)
            let count = Locked(0)
            async let outcome = Self.load(replicas, creds, users: (0..<4).map { "user\($0)" }, until: stop, count: count)
            try await Self.waitFor(count, atLeast: 10)
            try cluster.pgCtl(["-m", "fast", "-w", "stop"])
            try await Task.sleep(for: .milliseconds(400))
            #expect(try await replicas[0].send(.get("/readyz")).status == 503)
            try cluster.start()
            let atStart = count.withLock { $0 }
            try await Self.waitFor(count, atLeast: atStart + 10)
            #expect(count.withLock { $0 } >= atStart + 10, "writes succeed again after the restart")
            stop.withLock { $0 = true }
            let (acknowledged, statuses) = try await outcome
            #expect((statuses[503] ?? 0) > 0 && (statuses[200] ?? 0) > 0, "\(statuses)")
            #expect(Set(statuses.keys).isSubset(of: [200, 503]), "\(statuses)")
            for replica in replicas {
                #expect(try await replica.send(.get("/readyz")).status == 200)
                let after = try await replica.send(
                    .patch(creds.userPath("late") + "/customization").bearer(creds.token(for: "late")).json(Self.hide(0)))
                #expect(after.status == 200, "\(after.status) \(after.text)")
            }
            try await Self.verify(replicas[1], creds, acknowledged)
        } catch {
            for replica in replicas { await replica.stop() }
            throw error
        }
        for replica in replicas { await replica.stop() }
    }
}
