import Foundation
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

/// A live service on 127.0.0.1 port 0 over a fresh database, built exactly as `tab-server` builds it.
final class LiveService: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let service: TabStoreService
    var port: Int { service.port }
    let admin = "test-admin-token-0123456789"

    init(clock: (@Sendable () -> Int)? = nil, adjust: (inout ServiceOptions) -> Void = { _ in }) throws {
        var options = ServiceOptions()
        options.port = 0
        options.threads = 2
        options.dataDirectory = directory.path
        options.adminToken = admin
        options.accessLog = false
        options.shutdownGrace = 2
        options.corsOrigins = ["https://app.example"]
        adjust(&options)
        service = try TabStoreService.start(options: options, logger: .silent)
    }

    private let stopped = NSLock()
    private var isStopped = false

    /// Stops the service once: a second call returns at once (a second `TabStoreService.shutdown()`
    /// would close the listening socket's descriptor again, possibly one reused by then).
    func stop() async {
        let first = stopped.withLock { () -> Bool in
            defer { isStopped = true }
            return !isStopped
        }
        guard first else { return }
        await service.shutdown()
    }

    /// One request on a fresh connection, off the concurrency pool.
    func call(_ method: String, _ path: String, token: String? = nil, headers: [(String, String)] = [], json body: String? = nil) async throws -> RawClient.Response {
        let port = self.port
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        if body != nil, !all.contains(where: { $0.0 == "Content-Type" }) { all.append(("Content-Type", "application/json")) }
        let finalHeaders = all
        return try await offPool {
            let client = try RawClient(port: port)
            guard let response = client.request(method, path, headers: finalHeaders, body: body) else {
                throw SystemError(call: "request \(method) \(path)", errno: 0)
            }
            return response
        }
    }

    /// Creates an app with a schema; returns its signing secret.
    func makeApp(_ id: String, schema: String) async throws -> String {
        let created = try await call("POST", "/v1/apps", token: admin, json: #"{"id": "\#(id)", "name": "Test \#(id)"}"#)
        guard created.status == 201, case .object(let body) = try created.json(), case .string(let secret)? = body["signingSecret"] else {
            throw SystemError(call: "create app: \(created.status) \(created.text)", errno: 0)
        }
        let registered = try await call("PUT", "/v1/apps/\(id)/schema", token: admin, json: schema)
        guard registered.status == 201 else { throw SystemError(call: "register schema: \(registered.status) \(registered.text)", errno: 0) }
        return secret
    }

    func userToken(app: String, user: String, secret: String, expiresIn: Int = 3600) -> String {
        let now = Int(Date().timeIntervalSince1970)
        return JWT.sign(subject: Identifier(user), audience: Identifier(app), expiresAt: now + expiresIn, issuedAt: now, secret: secret)
    }
}

/// Runs `body` with a live service on 127.0.0.1 port 0 and always stops it, also when `body` throws.
/// `body` may stop the service itself (e.g. to reopen its folder); stopping twice is harmless.
func withLiveService<T>(
    clock: (@Sendable () -> Int)? = nil,
    adjust: (inout ServiceOptions) -> Void = { _ in },
    _ body: (LiveService) async throws -> T
) async throws -> T {
    let live = try LiveService(clock: clock, adjust: adjust)
    let result: T
    do {
        result = try await body(live)
    } catch {
        await live.stop()
        throw error
    }
    await live.stop()
    return result
}

extension RawClient.Response {
    /// A member of the JSON object body.
    func field(_ key: String) -> JSONValue? {
        guard case .object(let object)? = try? json() else { return nil }
        return object[key]
    }

    /// The rule codes of a problem document.
    var codes: [String] {
        guard case .array(let errors)? = field("errors") else { return [] }
        return errors.compactMap { if case .object(let error) = $0, case .string(let code)? = error["code"] { code } else { nil } }
    }

    /// The ids of a layout list member.
    func ids(_ key: String) -> [String] {
        guard case .array(let items)? = field(key) else { return [] }
        return items.compactMap { item in
            if case .object(let object) = item, case .string(let id)? = object["id"] { return id }
            if case .string(let id) = item { return id }
            return nil
        }
    }
}
