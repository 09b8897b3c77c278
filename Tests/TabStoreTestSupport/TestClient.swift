import Dispatch
import Synchronization
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

/// Something that answers `TestRequest`s: the API in-process (`InProcessClient`) or a live server (`LiveService`).
package protocol TestClient: Sendable {
    /// The operator's bearer token.
    var admin: String { get }

    /// One request, one response.
    /// - Throws: when no response arrives (a live server closed the connection or timed out).
    func send(_ request: TestRequest) async throws -> TestResponse
}

extension TestClient {
    /// Creates an app and registers its schema.
    /// - Returns: the app's signing secret.
    /// - Throws: `SystemError` when either step is refused.
    package func makeApp(_ id: String, schema: String) async throws -> String {
        let created = try await send(.post("/v1/apps").bearer(admin).json(#"{"id": "\#(id)", "name": "Test \#(id)"}"#))
        guard created.status == 201, case .string(let secret)? = created.field("signingSecret") else {
            throw TestFailure("create app \(id): \(created.status) \(created.text)")
        }
        let registered = try await send(.put("/v1/apps/\(id)/schema").bearer(admin).json(schema))
        guard registered.status == 201 else { throw TestFailure("register schema of \(id): \(registered.status) \(registered.text)") }
        return secret
    }
}

/// The API without a server, over a fresh database: each request goes through `admit`, then `respondInline`
/// or `respond`, in the order the server's event loop calls them; the response gets an `X-Request-ID` (the
/// client's, else one of its own) and loses its body for HEAD, as on the wire. Configured like `LiveService`
/// (same CORS origin, no access log) unless `configure` says otherwise.
package final class InProcessClient: TestClient {
    package let directory = TemporaryDirectory()
    package let store: SQLiteStore
    package let api: APIResponder
    package let serverState = ServerState()
    package let admin = "in-process-admin-token-0123456789"
    private let requests = Atomic<Int>(0)

    package init(configure: (inout APIConfiguration) -> Void = { _ in }) throws {
        store = try SQLiteStore(configuration: .init(path: directory.file("in-process.sqlite")))
        var configuration = APIConfiguration(adminToken: admin)
        configuration.accessLog = false
        configuration.allowedOrigins = ["https://app.example"]
        configure(&configuration)
        api = APIResponder(store: store, configuration: configuration, serverState: serverState, metrics: Metrics(), logger: .silent)
    }

    package func close() async { await store.close() }

    package func send(_ request: TestRequest) async -> TestResponse {
        let context = makeContext(request)
        if let refusal = api.admit(request.parsedHead, context: context) { return answer(refusal, to: request, context) }
        let complete = request.httpRequest
        if let inline = api.respondInline(to: complete, context: context) { return answer(inline, to: request, context) }
        return answer(await api.respond(to: complete, context: context), to: request, context)
    }

    /// What `admit` makes of the head alone (nil: the request may go on to its body).
    package func admit(_ request: TestRequest) -> TestResponse? {
        let context = makeContext(request)
        return api.admit(request.parsedHead, context: context).map { answer($0, to: request, context) }
    }

    private func makeContext(_ request: TestRequest) -> RequestContext {
        let number = requests.add(1, ordering: .relaxed).newValue
        return RequestContext(requestId: request.headers["X-Request-ID"] ?? "in-process-\(number)", receivedAt: DispatchTime.now().uptimeNanoseconds)
    }

    /// The response as the server writes it: with the request id, and without a body for HEAD.
    private func answer(_ response: HTTPResponse, to request: TestRequest, _ context: RequestContext) -> TestResponse {
        response.stream?.finish()  // no connection to stream on: let the source go, as a loop would once its client left
        var headers = response.headers
        headers.set("X-Request-ID", context.requestId)
        return TestResponse(status: response.status, headers: headers, body: request.method == "HEAD" ? [] : response.body)
    }
}

/// Runs `body` with an in-process API over a fresh database and always closes the database, also when `body` throws.
package func withInProcessAPI<T>(
    configure: (inout APIConfiguration) -> Void = { _ in }, _ body: (InProcessClient) async throws -> T
) async throws -> T {
    let client = try InProcessClient(configure: configure)
    let result: T
    do {
        result = try await body(client)
    } catch {
        await client.close()
        throw error
    }
    await client.close()
    return result
}

/// The two ways a test can reach the API; a test taking `Transport.allCases` runs the same requests both ways.
package enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inProcess, live

    package var testDescription: String { rawValue }
}

/// Runs `body` against the API reached by `transport`, stopped or closed afterwards whatever happens.
package func withAPI<T>(_ transport: Transport, _ body: (any TestClient) async throws -> T) async throws -> T {
    switch transport {
    case .inProcess: try await withInProcessAPI { try await body($0) }
    case .live: try await withLiveService { try await body($0) }
    }
}
