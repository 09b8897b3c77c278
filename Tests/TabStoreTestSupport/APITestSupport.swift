import Foundation
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

/// A live service on 127.0.0.1 port 0 over a fresh database, built exactly as `tab-server` builds it.
package final class LiveService: TestClient, @unchecked Sendable {
    package let directory = TemporaryDirectory()
    package let service: TabStoreService
    package var port: Int { service.port }
    package let admin = "test-admin-token-0123456789"

    /// - Parameter backend: `.postgres` serves from a fresh database of the shared test cluster.
    package init(backend: TestBackend = .sqlite, adjust: (inout ServiceOptions) -> Void = { _ in }) throws {
        var options = ServiceOptions()
        if backend == .postgres {
            guard let cluster = PostgresTestCluster.shared else { throw PostgresTestCluster.Failure("no PostgreSQL") }
            options.databaseURL = try cluster.freshDatabase()
            options.databaseConnections = 6
        }
        // Headroom for a loaded machine: a test of the bound itself sets its own.
        options.databaseTimeout = 60
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
    package func stop() async {
        let first = stopped.withLock { () -> Bool in
            defer { isStopped = true }
            return !isStopped
        }
        guard first else { return }
        await service.shutdown()
    }

    /// One request on a fresh connection, off the concurrency pool.
    /// - Throws: `SystemError` when the connection fails or closes before a whole response.
    package func send(_ request: TestRequest) async throws -> TestResponse {
        let port = self.port
        return try await offPool {
            // Generous: under the sanitizers on a busy machine a first write can take seconds; and longer than the
            // database bound these services get (30 s), so a bounded answer always comes before the client gives up.
            let client = try RawClient(port: port, timeout: 90)
            guard let response = client.request(request) else {
                throw TestFailure("request \(request.method) \(request.target) failed: \(client.failure ?? "no whole response")")
            }
            return response
        }
    }
}

/// Runs `body` with a live service on 127.0.0.1 port 0 and always stops it, also when `body` throws.
/// `body` may stop the service itself (e.g. to reopen its folder); stopping twice is harmless.
package func withLiveService<T>(
    backend: TestBackend = .sqlite,
    adjust: (inout ServiceOptions) -> Void = { _ in },
    _ body: (LiveService) async throws -> T
) async throws -> T {
    let live = try LiveService(backend: backend, adjust: adjust)
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
