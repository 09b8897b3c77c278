import Foundation
import Testing
import TabStoreClient
@testable import TabStore
@testable import TabStoreAuth
@testable import TabStoreSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The schema the client tests register: Home cannot be customized (hiding it is refused `not-hideable`), Alerts
/// and the Categories section's tabs can.
let clientTestSchema = """
    {"items": [
      {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house",
       "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
      {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
      {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
        {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
        {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
    ]}
    """

let bell: TabStoreID = "com.myApp.bell", climate: TabStoreID = "com.myApp.climate", lights: TabStoreID = "com.myApp.lights"
let home: TabStoreID = "com.myApp.home", categories: TabStoreID = "com.myApp.categories"

struct TestFailure: Error, CustomStringConvertible {
    let description: String
}

/// A real TabStore server in this process on 127.0.0.1, over a temporary data folder; it can stop and start again
/// on the same port and folder (a restart, with the same database).
final class ServerFixture: @unchecked Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-client-tests-\(UUID().uuidString)")
    let admin = "client-tests-admin-token-0123456789"
    private let lock = NSLock()
    private var service: TabStoreService?
    private var boundPort = 0

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var port: Int { lock.withLock { boundPort } }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts the server: on a free port the first time, then on the same one.
    func start() throws {
        var options = ServiceOptions()
        options.port = port
        options.threads = 2
        options.dataDirectory = directory.path
        options.adminToken = admin
        options.accessLog = false
        options.shutdownGrace = 2
        // Headroom for a loaded machine: the database bound (default 5 s) is not what these tests are about.
        options.databaseTimeout = 60
        let started = try TabStoreService.start(options: options, logger: .silent)
        lock.withLock {
            service = started
            boundPort = started.port
        }
    }

    func stop() async {
        let running = lock.withLock { () -> TabStoreService? in
            defer { service = nil }
            return service
        }
        await running?.shutdown()
    }

    /// An operator request.
    func adminRequest(_ method: String, _ path: String, json: String? = nil) async throws -> TransportResponse {
        var request = URLRequest(url: URL(string: baseURL.absoluteString + path)!)
        request.httpMethod = method
        request.setValue("Bearer " + admin, forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return try await URLSessionTransport(requestTimeout: 90).send(request)
    }

    /// Creates an app and registers `schema`.
    func makeApp(_ id: String = "com.myApp", schema: String = clientTestSchema) async throws -> TestApp {
        let created = try await adminRequest("POST", "/v1/apps", json: #"{"id": "\#(id)", "name": "Client tests"}"#)
        guard created.status == 201, let object = try JSONSerialization.jsonObject(with: created.body) as? [String: Any],
              let secret = object["signingSecret"] as? String else { throw TestFailure(description: "create app: \(created.status)") }
        let registered = try await adminRequest("PUT", "/v1/apps/\(id)/schema", json: schema)
        guard registered.status == 201 else { throw TestFailure(description: "register schema: \(registered.status)") }
        return TestApp(id: id, secret: secret)
    }
}

/// Runs `body` with a fresh server, stopped afterwards whatever happens.
func withServer<T>(_ body: (ServerFixture) async throws -> T) async throws -> T {
    let server = try ServerFixture()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

struct TestApp: Sendable {
    let id: String
    let secret: String

    /// A user token valid for `expiresIn` seconds from `issuedAt`.
    func token(for user: String, expiresIn: Int = 3600, issuedAt: Int = Int(Date().timeIntervalSince1970)) -> String {
        JWT.sign(subject: Identifier(user), audience: Identifier(id), expiresAt: issuedAt + expiresIn, issuedAt: issuedAt, secret: secret)
    }

    /// A client for `user` with a valid token, short backoffs, `transport`, built with `schemaVersion`.
    func client(
        _ server: ServerFixture, user: String = "alice", schemaVersion: Int? = nil,
        transport: any TabStoreTransport = URLSessionTransport(requestTimeout: 90),
                token: TokenProvider? = nil) -> TabStoreClient {
        let quick = Backoff(initial: 0.05, maximum: 0.2)
        let configuration = TabStoreClient.Configuration(schemaVersion: schemaVersion, transport: transport, feedBackoff: quick, queueBackoff: quick)
        let app = self
        return TabStoreClient(baseURL: server.baseURL, appId: TabStoreID(id), userId: TabStoreID(user), configuration: configuration,
                              token: token ?? { _ in app.token(for: user) })
    }
}

/// What a `RecordingTransport` saw of one exchange.
struct Exchange: Sendable {
    let method: String
    let path: String
    /// The URL's query as sent (percent-encoded), nil without one.
    let query: String?
    /// Lowercased names (URLRequest may canonicalize their case).
    let requestHeaders: [String: String]
    let status: Int?
    let responseHeaders: [String: String]
    let streamed: Bool
}

/// `URLSessionTransport` with a record of every exchange, and the power to lose answers: the request reaches the
/// server (which applies it), the client sees a broken connection instead of the answer.
final class RecordingTransport: TabStoreTransport, @unchecked Sendable {
    private let base = URLSessionTransport(requestTimeout: 90, streamIdleTimeout: 60)
    private let lock = NSLock()
    private var log: [Exchange] = []
    private var toLose = 0

    var exchanges: [Exchange] { lock.withLock { log } }
    var statuses: [Int?] { exchanges.filter { !$0.streamed }.map(\.status) }

    /// The answers to the next `count` requests are lost.
    func loseAnswers(_ count: Int) { lock.withLock { toLose = count } }

    private func record(_ request: URLRequest, status: Int?, headers: [String: String], streamed: Bool) {
        let exchange = Exchange(method: request.httpMethod ?? "GET", path: request.url?.path ?? "", query: request.url?.query,
            requestHeaders: Dictionary((request.allHTTPHeaderFields ?? [:]).map { ($0.key.lowercased(), $0.value) }) { first, _ in first },
            status: status, responseHeaders: headers, streamed: streamed)
        lock.withLock { log.append(exchange) }
    }

    func send(_ request: URLRequest) async throws -> TransportResponse {
        let response: TransportResponse
        do {
            response = try await base.send(request)
        } catch {
            record(request, status: nil, headers: [:], streamed: false)
            throw error
        }
        record(request, status: response.status, headers: response.headers, streamed: false)
        let lose = lock.withLock { () -> Bool in
            defer { toLose = max(0, toLose - 1) }
            return toLose > 0
        }
        if lose { throw URLError(.networkConnectionLost) }
        return response
    }

    func stream(_ request: URLRequest) async throws -> TransportStream {
        do {
            let stream = try await base.stream(request)
            record(request, status: stream.status, headers: stream.headers, streamed: true)
            return stream
        } catch {
            record(request, status: nil, headers: [:], streamed: true)
            throw error
        }
    }
}

/// Values arriving from another task, awaited with a generous safety-net timeout (never a fixed sleep).
actor Inbox<Value: Sendable> {
    private(set) var values: [Value] = []
    private var waiters: [UUID: (predicate: @Sendable ([Value]) -> Bool, continuation: CheckedContinuation<[Value], any Error>)] = [:]

    func push(_ value: Value) {
        values.append(value)
        for (id, waiter) in waiters where waiter.predicate(values) {
            waiters[id] = nil
            waiter.continuation.resume(returning: values)
        }
    }

    /// The values once `predicate` holds for them.
    /// - Throws: `TestFailure` when it does not within `timeout` seconds (a positive wait: generous, for a loaded machine).
    func wait(timeout: Double = 90, until predicate: @escaping @Sendable ([Value]) -> Bool) async throws -> [Value] {
        if predicate(values) { return values }
        let id = UUID()
        let timer = Task {
            try await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            self.expire(id)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            waiters[id] = (predicate, continuation)
        }
    }

    private func expire(_ id: UUID) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.continuation.resume(throwing: TestFailure(description: "timed out; values so far: \(values)"))
    }
}
