import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Client text is matched by bytes wherever it is compared")
struct ByteIdentityTests {
    @Test("a CORS origin matches only its exact bytes")
    func corsOriginBytes() async throws {
        try await withInProcessAPI(configure: { $0.allowedOrigins = ["https://Kate.example"] }) { api in
            #expect(await api.send(.get("/healthz").origin("https://Kate.example")).header("Access-Control-Allow-Origin") == "https://Kate.example")
            // KELVIN SIGN: equal to "K" as a Swift String, a different origin as bytes.
            #expect(await api.send(.get("/healthz").origin("https://\u{212A}ate.example")).header("Access-Control-Allow-Origin") == nil)
            #expect(await api.send(.get("/healthz")).status == 200)
        }
    }

    @Test("a path literal matches only its exact bytes")
    func pathLiteralBytes() {
        var builder = Router.Builder()
        builder.add("GET", "/\u{212A}elvin", access: .anyone, body: .empty) { _, _ in HTTPResponse(status: 200) }
        let router = builder.build()
        if case .found = router.match(method: "GET", path: "/Kelvin") { Issue.record("a KELVIN SIGN literal matched K") }
        // Its own bytes, percent-encoded as a client sends them, do match.
        guard case .found = router.match(method: "GET", path: "/%E2%84%AAelvin") else {
            Issue.record("a KELVIN SIGN literal did not match its own bytes")
            return
        }
    }

    @Test("a query parameter name matches only its exact bytes")
    func queryParameterBytes() {
        // %E2%84%AA is KELVIN SIGN percent-encoded, as a client would send it.
        #expect(TestRequest.get("/x?%E2%84%AAey=1").httpRequest.queryParameter("Key") == nil)
        #expect(TestRequest.get("/x?Key=1").httpRequest.queryParameter("Key") == "1")
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
