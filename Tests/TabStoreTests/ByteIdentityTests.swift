import Testing
@testable import TabStore

@Suite("Client text is matched by bytes wherever it is compared")
struct ByteIdentityTests {
    @Test("a CORS origin, a path literal and a query parameter name match only their exact bytes")
    func bytesEverywhere() async throws {
        let directory = TemporaryDirectory()
        let store = try SQLiteStore(configuration: .init(path: directory.file("bytes.sqlite")))
        var configuration = APIConfiguration(adminToken: "byte-identity-admin-token")
        configuration.accessLog = false
        configuration.allowedOrigins = ["https://Kate.example"]
        let api = TabStoreAPI(store: store, configuration: configuration)
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
