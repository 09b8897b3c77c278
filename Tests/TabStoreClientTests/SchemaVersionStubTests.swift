import Foundation
import Testing
@testable import TabStoreClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The values of `name` in a URL query (`a=1&b=2`), decoded.
func queryValues(_ query: String?, _ name: String) -> [String] {
    guard let query else { return [] }
    return query.split(separator: "&").compactMap { pair -> String? in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == name else { return nil }
        return String(parts[1]).removingPercentEncoding
    }
}

/// What `body` threw, nil when it returned.
func thrown<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// A transport that answers every request with `answer` and keeps the requests: what the client sends, and what
/// it makes of answers a real server would not give (a 304 for a representation it never sent).
final class StubTransport: TabStoreTransport, @unchecked Sendable {
    // `lock` guards `answer` and `log`; the client calls `send` from any task.
    private let lock = NSLock()
    private var handler: @Sendable (URLRequest) -> TransportResponse
    private var log: [URLRequest] = []

    init(_ answer: @escaping @Sendable (URLRequest) -> TransportResponse) { handler = answer }

    var requests: [URLRequest] { lock.withLock { log } }

    /// Answers the requests from now on with `answer`.
    func answer(with answer: @escaping @Sendable (URLRequest) -> TransportResponse) { lock.withLock { handler = answer } }

    func send(_ request: URLRequest) async throws -> TransportResponse {
        let answer = lock.withLock { () -> @Sendable (URLRequest) -> TransportResponse in
            log.append(request)
            return handler
        }
        return answer(request)
    }

    func stream(_ request: URLRequest) async throws -> TransportStream {
        let response = try await send(request)
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.yield(response.body)
        continuation.finish()
        return TransportStream(status: response.status, headers: response.headers, body: body)
    }

    /// A customization answer under `schemaVersion` at `revision`, with its ETag.
    static func customization(revision: Int, schemaVersion: Int) -> TransportResponse {
        let body = #"{"appId":"com.myApp","userId":"alice","revision":\#(revision),"schemaVersion":\#(schemaVersion),"#
            + #""updatedAt":"2026-11-29T22:00:00Z","tabs":{},"sections":{},"tabBarOrder":null}"#
        return TransportResponse(status: 200, headers: ["Content-Type": "application/json", "ETag": "\"\(revision).\(schemaVersion)\""],
                                 body: Data(body.utf8))
    }

    static func problem(_ status: Int, _ slug: String, extra: String = "") -> TransportResponse {
        let body = #"{"type":"urn:tabstore:problem:\#(slug)","title":"t","status":\#(status),"detail":"d"\#(extra)}"#
        return TransportResponse(status: status, headers: ["Content-Type": "application/problem+json"], body: Data(body.utf8))
    }
}

/// The schema version through the client without a server: the query it sends, the errors it types, the cache
/// and the queue file.
@Suite("TabStoreClient schema version, without a server")
struct SchemaVersionStubTests {
    static let base = URL(string: "http://127.0.0.1:9/prefix/")!

    static func client(_ transport: StubTransport, schemaVersion: Int?, user: TabStoreID = "alice") -> TabStoreClient {
        TabStoreClient(baseURL: base, appId: "com.myApp", userId: user, configuration: .init(schemaVersion: schemaVersion, transport: transport)) { _ in "t" }
    }

    static func queueFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-queue-\(UUID().uuidString)/queue.json")
    }

    @Test("every call's URL names the configured version once, after the call's own parameters; none without one")
    func query() async throws {
        let transport = StubTransport { request in
            let path = request.url?.path ?? ""
            if path.hasSuffix("/history") { return TransportResponse(status: 200, headers: [:], body: Data(#"{"items":[],"nextBefore":null}"#.utf8)) }
            let customization = StubTransport.customization(revision: 1, schemaVersion: 7)
            guard path.hasSuffix("/events") else { return customization }
            let event = "event: customization\nid: 1.7\ndata: " + String(decoding: customization.body, as: UTF8.self) + "\n\n"
            return TransportResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: Data(event.utf8))
        }
        let client = Self.client(transport, schemaVersion: 7, user: "a b")
        _ = try await client.customization()
        _ = try await client.apply([.resetTabBarOrder])
        _ = try await client.replace(Customization(appId: "com.myApp", userId: "a b"))
        _ = try await client.revert(to: 0)
        try await client.reset()
        _ = try await client.history(limit: 2, before: 5)
        _ = await thrown { try await client.layout(sizeClass: .compact, platform: .iOS) }  // not a layout body: invalidResponse
        var feed = client.updates().makeAsyncIterator()
        _ = try await feed.next()
        let urls = transport.requests.compactMap { $0.url?.absoluteString }
        #expect(urls.count >= 8)
        for url in urls { #expect(queryValues(URL(string: url)?.query, "schemaVersion") == ["7"], "\(url)") }
        #expect(urls.contains("http://127.0.0.1:9/prefix/v1/apps/com.myApp/users/a%20b/customization/history?limit=2&before=5&schemaVersion=7"))
        #expect(urls.contains("http://127.0.0.1:9/prefix/v1/apps/com.myApp/users/a%20b/layout?sizeClass=compact&platform=iOS&schemaVersion=7"))
        #expect(urls.contains("http://127.0.0.1:9/prefix/v1/apps/com.myApp/users/a%20b/customization/events?schemaVersion=7"))

        let plain = StubTransport { _ in StubTransport.customization(revision: 1, schemaVersion: 2) }
        _ = try await Self.client(plain, schemaVersion: nil).customization()
        #expect(plain.requests.map { $0.url?.absoluteString } == ["http://127.0.0.1:9/prefix/v1/apps/com.myApp/users/alice/customization"])
    }

    @Test("410 schema-version-retired and 404 schema-version-not-found are typed by their problem type, other 404s and 410s are not")
    func errors() async throws {
        let transport = StubTransport { _ in StubTransport.problem(410, "schema-version-retired", extra: #","minimumSchemaVersion":3,"currentSchemaVersion":4"#) }
        let client = Self.client(transport, schemaVersion: 2)
        let retired = await thrown { try await client.customization() }
        guard case .schemaVersionRetired(let problem)? = retired as? TabStoreError else {
            Issue.record("not retired: \(String(describing: retired))")
            return
        }
        #expect(problem.type == .schemaVersionRetired && problem.minimumSchemaVersion == 3 && problem.currentSchemaVersion == 4)
        #expect((retired as? TabStoreError)?.problem == problem && (retired as? TabStoreError)?.isTransient == false)

        transport.answer { _ in StubTransport.problem(404, "schema-version-not-found") }
        let missing = await thrown { try await client.apply([.resetTabBarOrder]) }
        guard case .schemaVersionNotFound(let notFound)? = missing as? TabStoreError else {
            Issue.record("not notFound: \(String(describing: missing))")
            return
        }
        #expect(notFound.type == .schemaVersionNotFound && notFound.minimumSchemaVersion == nil)

        transport.answer { _ in StubTransport.problem(404, "app-not-found") }
        guard case .server(404, let other?)? = await thrown({ try await client.customization() }) as? TabStoreError else {
            Issue.record("app-not-found is not .server(404)")
            return
        }
        #expect(other.type == ProblemType.slug("app-not-found"))
        transport.answer { _ in TransportResponse(status: 410, headers: [:], body: Data("gone".utf8)) }
        guard case .server(410, nil)? = await thrown({ try await client.customization() }) as? TabStoreError else {
            Issue.record("a 410 without a problem is not .server(410, nil)")
            return
        }
    }

    @Test("a representation the queue cached under version 1 is not served to version 2, not even on a 304")
    func cacheNotServedAcrossVersions() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let transport = StubTransport { _ in StubTransport.customization(revision: 1, schemaVersion: 1) }
        try await Self.client(transport, schemaVersion: 1).offlineQueue(file: file).enqueue([.resetTabBarOrder])
        let client = Self.client(transport, schemaVersion: 2)
        let replay = try await client.offlineQueue(file: file).replay()
        #expect(replay.remaining == 0 && replay.events.count == 1)
        #expect(transport.requests.last?.url?.query == "schemaVersion=1")
        #expect(await client.cache.entry(client.resource("customization", schemaVersion: 1))?.etag == "\"1.1\"")

        transport.answer { _ in TransportResponse(status: 304, headers: [:], body: Data()) }
        let read = await thrown { try await client.customization() }
        guard case .server(304, _)? = read as? TabStoreError else {
            Issue.record("served: \(String(describing: read))")
            return
        }
        #expect(transport.requests.last?.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(transport.requests.last?.url?.query == "schemaVersion=2")
    }

    @Test("the queue file keeps each write's version (none when there is none); a reopened queue reads it back")
    func queueFile() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let unused = StubTransport { _ in StubTransport.problem(503, "draining") }
        let first = try await Self.client(unused, schemaVersion: 1).offlineQueue(file: file).enqueue([.resetTabBarOrder])
        let second = try await Self.client(unused, schemaVersion: nil).offlineQueue(file: file).enqueue([.resetTabBarOrder])
        #expect(first.schemaVersion == 1 && second.schemaVersion == nil)
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        let writes = try #require(stored?["writes"] as? [[String: Any]])
        #expect(stored?["format"] as? Int == 1)
        #expect(writes.count == 2 && writes[0]["schemaVersion"] as? Int == 1 && writes[1]["schemaVersion"] == nil)
        let reopened = try Self.client(unused, schemaVersion: 2).offlineQueue(file: file)
        #expect(await reopened.pending.map(\.idempotencyKey) == [first.idempotencyKey, second.idempotencyKey])
        #expect(await reopened.pending.map(\.schemaVersion) == [1, nil])
        #expect(unused.requests.isEmpty)
    }
}
