import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

@Suite("Client text is matched by bytes wherever it is compared")
struct ByteIdentityTests {
    @Test("a CORS origin, a path literal and a query parameter name match only their exact bytes")
    func bytesEverywhere() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("bytes.sqlite")))
        var configuration = APIConfiguration(adminToken: "byte-identity-admin-token")
        configuration.accessLog = false
        configuration.allowedOrigins = ["https://Kate.example"]
        let api = APIResponder(store: store, configuration: configuration)
        func get(_ target: String, origin: String? = nil) async -> HTTPResponse {
            var head = InProcessAPI.head("GET", target, token: nil)
            if let origin { head.headers.add("Origin", origin) }
            return await api.respond(to: HTTPRequest(head: head, body: []), context: InProcessAPI.context)
        }
        #expect(await get("/healthz", origin: "https://Kate.example").headers["Access-Control-Allow-Origin"] == "https://Kate.example")
        // KELVIN SIGN: equal to "K" as a Swift String, a different origin as bytes.
        #expect(await get("/healthz", origin: "https://\u{212A}ate.example").headers["Access-Control-Allow-Origin"] == nil)
        #expect(await get("/healthz").status == 200)
        var builder = Router.Builder()
        builder.add("GET", "/\u{212A}elvin", access: .anyone) { _, _ in HTTPResponse(status: 200) }
        let router = builder.build()
        if case .found = router.match(method: "GET", path: "/Kelvin") { Issue.record("a KELVIN SIGN literal matched K") }
        // %E2%84%AA is KELVIN SIGN percent-encoded, as a client would send it.
        var request = HTTPRequest(head: InProcessAPI.head("GET", "/x?%E2%84%AAey=1", token: nil), body: [])
        #expect(request.queryParameter("Key") == nil)
        request.head.target = "/x?Key=1"
        #expect(request.queryParameter("Key") == "1")
        await store.close()
    }
}

@Suite("Per-user write turns")
struct KeyedLockTests {
    @Test("writes of one key never overlap, other keys are not held up, and nothing stays behind")
    func turns() async throws {
        let lock = KeyedLock<Identifier>()
        let inside = Locked([Identifier: Int]())
        let overlaps = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                // "Kate" and KELVIN SIGN "\u{212A}ate" are two keys (bytes), so they may run side by side.
                let key: Identifier = index % 2 == 0 ? "Kate" : "\u{212A}ate"
                group.addTask {
                    try await lock.withLock(key) {
                        let concurrent = inside.withLock { inside -> Int in
                            inside[key, default: 0] += 1
                            return inside[key]!
                        }
                        if concurrent > 1 { overlaps.withLock { $0 += 1 } }
                        await Task.yield()
                        inside.withLock { $0[key]! -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(overlaps.withLock { $0 } == 0)
        #expect(lock.heldKeys == 0)
    }
}
