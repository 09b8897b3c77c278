import Foundation
import Glibc
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Operations: storage health, metrics cardinality, bounded logs, customization gauge (security audit)")
struct OperationsTests {
    static let hideBell = #"{"tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}"#

    /// Fills the database (the writer may not grow the file past its current size,
    /// https://www.sqlite.org/pragma.html#pragma_max_page_count) and writes until a write is refused.
    /// - Returns: the refusal; nil when 500 writes all succeeded.
    static func writeUntilFull(_ live: LiveService, _ creds: Credentials) async throws -> TestResponse? {
        try await live.service.sqlite!.executeOnWriter("PRAGMA max_page_count = 1")
        for user in 0..<500 {
            let response = try await live.send(.put(creds.app.userPath("u\(user)") + "/customization").bearer(creds.app.token(for: "u\(user)"))
                .json(Self.hideBell))
            if response.status != 200 { return response }
        }
        return nil
    }

    @Test("a full database answers writes 503 with Retry-After and storage-unavailable")
    func fullDatabase() async throws {
        try await withLiveService { live in
            let refused = try #require(try await Self.writeUntilFull(live, try await Credentials.register(on: live)))
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == String(StorePolicy.retryAfterSeconds))
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(refused.problemType == "urn:tabstore:problem:storage-unavailable")
            #expect(live.service.sqlite!.health.current?.error.code == 13)  // SQLITE_FULL
        }
    }

    @Test("/readyz fails with storage-unavailable while the database is full, and recovers once a write succeeds")
    func readinessFollowsStorage() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.get("/readyz")).status == 200)
            _ = try #require(try await Self.writeUntilFull(live, creds))
            // While the failure is fresh /readyz reports it. Past `retryAfterSeconds` a probe write runs, and with only
            // the page limit against it (it rewrites a header field) it succeeds: so the pair counts only when a refused
            // write and the readiness check both fit in that interval, however slow the machine is at other times.
            var notReady: TestResponse?
            for attempt in 0..<20 where notReady == nil {
                let started = Date()
                let refused = try await live.send(.put(creds.app.userPath("full\(attempt)") + "/customization")
                    .bearer(creds.app.token(for: "full\(attempt)")).json(Self.hideBell))
                #expect(refused.status == 503)
                let answer = try await live.send(.get("/readyz"))
                if Date().timeIntervalSince(started) < Double(StorePolicy.retryAfterSeconds) { notReady = answer }
            }
            let fresh = try #require(notReady, "no refused write and readiness check within \(StorePolicy.retryAfterSeconds) s in 20 tries")
            #expect(fresh.status == 503)
            #expect(fresh.problemType == "urn:tabstore:problem:storage-unavailable")

            try await live.service.sqlite!.executeOnWriter("PRAGMA max_page_count = 1073741823")
            let recovered = try await live.send(.put(creds.app.userPath("after") + "/customization").bearer(creds.app.token(for: "after"))
                .json(Self.hideBell))
            #expect(recovered.status == 200)
            #expect(try await live.send(.get("/readyz")).status == 200)
        }
    }

    @Test("2,000 requests with distinct junk methods leave /metrics small, with methods from a fixed set")
    func junkMethods() async throws {
        try await withLiveService { live in
            let port = live.port
            let statuses = try await offPool { () throws -> Set<Int> in
                var statuses: Set<Int> = []
                var client = try RawClient(port: port)
                for index in 0..<2_000 {
                    if let response = client.request(.method("JUNK\(index)X", "/healthz")) {
                        statuses.insert(response.status)
                    } else {
                        client = try RawClient(port: port)  // the server closed the connection: carry on with a new one
                    }
                }
                return statuses
            }
            #expect(!statuses.isEmpty)
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.status == 200)
            #expect(metrics.body.count < 16 * 1024, "/metrics is \(metrics.body.count) bytes")
            let allowed: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"]
            var methods: Set<String> = []
            for line in metrics.text.split(separator: "\n") where line.hasPrefix("tabstore_http_requests_total{") {
                if let start = line.range(of: "method=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") {
                    methods.insert(String(line[start..<end]))
                }
            }
            #expect(methods.contains("other"))
            #expect(methods.isSubset(of: allowed), "\(methods)")
        }
    }

    @Test("the logger bounds every string to 256 UTF-8 bytes without splitting a character; methods log as a fixed set")
    func boundedLogs() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let logger = Logger(minimum: .info, fd: fds[1])
        let long = String(repeating: "a", count: 252) + "é" + String(repeating: "x", count: 10_000)
        logger.info("request", [("path", .string(long)), ("nested", .array([.string(String(repeating: "€", count: 500))])),
                                ("method", .string(Metrics.methodLabel("J\u{1b}[31mUNK")))])
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(fds[0])
        #expect(bytes.count < 1_024, "one line of \(bytes.count) bytes")
        #expect(bytes.filter { $0 == 0x0A }.count == 1)
        guard case .object(let line)? = try? JSONParser.parse(Array(bytes.dropLast())) else {
            Issue.record("not one JSON line: \(String(decoding: bytes, as: UTF8.self))")
            return
        }
        guard case .string(let path)? = line["path"], case .array(let nested)? = line["nested"], case .string(let euros)? = nested.first else {
            Issue.record("fields missing")
            return
        }
        #expect(path.utf8.count <= Logger.maxValueBytes)
        // 252 + 2 bytes of "é" + 3 of "…" would cross 256: a byte cut would have split "é".
        #expect(path == String(repeating: "a", count: 252) + "…")
        #expect(euros.utf8.count <= Logger.maxValueBytes && euros.hasSuffix("…"))
        #expect(euros.dropLast().allSatisfy { $0 == "€" })
        #expect(line["method"] == .string("other"))
        #expect(Logger.truncated("short") == "short")
    }

    @Test("the customization gauge follows inserts, updates, deletes and app deletion without reading the table; equals count(*) after a restart")
    func customizationGauge() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("tabstore.sqlite")
        @Sendable func record(_ app: String, _ user: String, _ revision: Int) -> CustomizationRecord {
            CustomizationRecord(appId: app, userId: user, revision: revision, schemaVersion: 1, document: Array("{}".utf8), updatedAt: "t")
        }
        do {
            let store = try SQLiteStore(configuration: SQLiteStore.Configuration(path: path))
            _ = try await store.createApp(id: "a", name: "A", signingSecret: "s", createdAt: "t")
            _ = try await store.createApp(id: "b", name: "B", signingSecret: "s", createdAt: "t")
            for user in 0..<5 {
                _ = try await store.updateCustomization(appId: "a", userId: "u\(user)", expectedRevision: nil) { _ in record("a", "u\(user)", 1) }
            }
            for user in 0..<3 {
                _ = try await store.updateCustomization(appId: "b", userId: "u\(user)", expectedRevision: nil) { _ in record("b", "u\(user)", 1) }
            }
            #expect(try await store.customizationCount() == 8)
            _ = try await store.updateCustomization(appId: "a", userId: "u0", expectedRevision: 1) { _ in record("a", "u0", 2) }  // an update
            _ = try await store.updateCustomization(appId: "a", userId: "u1", expectedRevision: nil) { _ in nil }  // no change
            await #expect(throws: StoreConflict.self) {  // refused: nothing stored
                _ = try await store.updateCustomization(appId: "a", userId: "new", expectedRevision: 5) { _ in record("a", "new", 1) }
            }
            await #expect(throws: StoreConflict.self) {  // the app does not exist: the insert is rolled back
                _ = try await store.updateCustomization(appId: "zz", userId: "u", expectedRevision: nil) { _ in record("zz", "u", 1) }
            }
            #expect(try await store.customizationCount() == 8)
            #expect(try await store.deleteCustomization(appId: "a", userId: "u4", expectedRevision: nil))
            #expect(try await !store.deleteCustomization(appId: "a", userId: "u4", expectedRevision: nil))
            #expect(try await store.customizationCount() == 7)
            #expect(try await store.deleteApp("a"))
            #expect(try await store.customizationCount() == 3)

            // A row written behind the store's back (another connection) does not move the gauge: /metrics
            // reads memory, not the table. It is counted at the next start.
            let other = try SQLiteConnection(path: path)
            try other.run(
                "INSERT INTO customizations (app_id, user_id, revision, schema_version, document, updated_at) VALUES ('b', 'x', 1, 1, x'7b7d', 't')")
            #expect(try await store.customizationCount() == 3)
            await store.close()
        }
        let reopened = try SQLiteStore(configuration: SQLiteStore.Configuration(path: path))
        let check = try SQLiteConnection(path: path)
        #expect(try await reopened.customizationCount() == check.scalarInt("SELECT count(*) FROM customizations"))
        #expect(try await reopened.customizationCount() == 4)
        await reopened.close()
    }

    @Test("a second service on the same database in the same process is refused by the lock")
    func lockInProcess() async throws {
        try await withLiveService { live in
            var options = ServiceOptions()
            options.port = 0
            options.dataDirectory = live.directory.path
            options.adminToken = live.admin
            #expect {
                _ = try TabStoreService.start(options: options, logger: .silent)
            } throws: { error in
                "\(error)".contains("already serving")
            }
        }
    }
}
