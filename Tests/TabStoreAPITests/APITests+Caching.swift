import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// Caching (RFC 9111): the schema's validators, Cache-Control on every answer, Vary: Origin, /openapi.yaml's tag.
extension APITests {
    // MARK: The schema's ETag "v<version>"

    @Test("GET schema sends ETag \"v1\"; If-None-Match with it, weak, in a list or * is 304 without a body")
    func schemaIfNoneMatch() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let schema = TestRequest.get("/v1/apps/app.one/schema").bearer(creds.userToken)
            #expect(try await live.send(schema).etag == "\"v1\"")
            for value in ["\"v1\"", "W/\"v1\"", "\"v0\", \"v1\"", "*"] {
                let answer = try await live.send(schema.ifNoneMatch(value))
                #expect(answer.status == 304, "\(value)")
                #expect(answer.etag == "\"v1\"", "\(value)")
                #expect(answer.header("Cache-Control") == "private, no-cache", "\(value)")
                #expect(answer.body.isEmpty)
            }
            #expect(try await live.send(schema.ifNoneMatch("\"v0\"")).status == 200)
        }
    }

    @Test("If-Match on the schema: the current tag passes, another is 412 with the current ETag")
    func schemaIfMatch() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let schema = TestRequest.get("/v1/apps/app.one/schema").bearer(creds.userToken)
            #expect(try await live.send(schema.ifMatch("\"v1\"")).status == 200)
            let wrong = try await live.send(schema.ifMatch("\"v2\""))
            #expect(wrong.status == 412)
            #expect(wrong.etag == "\"v1\"")
        }
    }

    @Test("a schema version never changes: 304 for its tag, cached as immutable for a day")
    func schemaVersionImmutable() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let version = try await live.send(.get("/v1/apps/app.one/schema/versions/1").bearer(creds.userToken).ifNoneMatch("\"v1\""))
            #expect(version.status == 304)
            #expect(version.header("Cache-Control") == "private, max-age=86400, immutable")
        }
    }

    @Test("an unquoted If-None-Match on the schema is 400")
    func schemaMalformedIfNoneMatch() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            #expect(try await live.send(.get("/v1/apps/app.one/schema").bearer(creds.userToken).ifNoneMatch("v1")).status == 400)
        }
    }

    @Test("a new schema version changes the schema's tag, never an earlier version's")
    func schemaTagFollowsVersion() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBellAndNews)).status == 201)
            let changed = try await live.send(.get("/v1/apps/app.one/schema").bearer(creds.userToken).ifNoneMatch("\"v1\""))
            #expect(changed.status == 200)
            #expect(changed.etag == "\"v2\"")
            let versions = "/v1/apps/app.one/schema/versions/"
            #expect(try await live.send(.get(versions + "1").bearer(creds.userToken).ifNoneMatch("\"v1\"")).status == 304)
            #expect(try await live.send(.get(versions + "2").bearer(creds.userToken).ifNoneMatch("\"v1\"")).status == 200)
        }
    }

    // MARK: Cache-Control and Vary

    @Test("every API answer says how it may be cached: operator reads, writes, 204s and preflights are no-store")
    func cacheControlEverywhere() async throws {
        try await withLiveService { live in
            _ = try await Credentials.register(on: live, schema: Self.withBell)
            let answers = [
                try await live.send(.get("/v1/apps").bearer(live.admin)),
                try await live.send(.get("/v1/apps/app.one").bearer(live.admin)),
                try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin)),
                try await live.send(.put("/v1/apps/app.one/schema?dryRun=true").bearer(live.admin).json(Self.withBell)),
                try await live.send(.options("/v1/apps").origin("https://app.example").header("Access-Control-Request-Method", "GET")),
                try await live.send(.delete("/v1/apps/app.one/users/u/customization").bearer(live.admin)),
            ]
            for answer in answers { #expect(answer.header("Cache-Control") == "no-store", "\(answer.status)") }
        }
    }

    @Test("the server's own refusals (a framing error) are no-store")
    func serverRefusalsNoStore() async throws {
        try await withLiveService { live in
            let port = live.port
            let framing = try await offPool { () throws -> TestResponse? in
                let client = try RawClient(port: port)
                client.send("GARBAGE\r\n\r\n")
                return client.readResponse()
            }
            #expect(framing?.status == 400)
            #expect(framing?.header("Cache-Control") == "no-store")
        }
    }

    @Test("Vary: Origin whenever CORS is on, with or without Origin and on 304s; the allowed origin is echoed")
    func varyOrigin() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let reads: [TestRequest] = [
                .get(creds.customization).bearer(creds.userToken), .get(creds.layout("regular")).bearer(creds.userToken),
                .get("/v1/apps/app.one/schema").bearer(creds.userToken), .get("/v1/apps/app.one/schema/versions/1").bearer(creds.userToken),
                .get("/openapi.yaml"), .get("/v1/apps").bearer(live.admin),
            ]
            for read in reads {
                let path = read.target
                let plain = try await live.send(read)
                #expect(plain.status == 200, "\(path)")
                #expect(plain.headers.tokens("Vary").contains("origin"), "\(path) without Origin")
                #expect(plain.header("Access-Control-Allow-Origin") == nil, "\(path)")
                let browser = try await live.send(read.origin("https://app.example"))
                #expect(browser.headers.tokens("Vary").contains("origin"), "\(path) with Origin")
                #expect(browser.header("Access-Control-Allow-Origin") == "https://app.example", "\(path)")
                if let tag = plain.etag {
                    let notModified = try await live.send(read.ifNoneMatch(tag))
                    #expect(notModified.status == 304, "\(path)")
                    #expect(notModified.headers.tokens("Vary").contains("origin"), "\(path) 304")
                }
            }
        }
    }

    @Test("without CORS nothing varies by Origin")
    func noVaryWithoutCORS() async throws {
        try await withInProcessAPI(configure: { $0.allowedOrigins = [] }) { api in
            #expect(await api.send(.get("/healthz")).header("Vary") == nil)
        }
    }

    @Test("probes and metrics are no-store")
    func probesNoStore() async throws {
        try await withLiveService { live in
            for path in ["/healthz", "/readyz", "/metrics"] {
                let probe = try await live.send(.get(path))
                #expect(probe.status == 200, "\(path)")
                #expect(probe.header("Cache-Control") == "no-store", "\(path)")
            }
        }
    }

    @Test("/openapi.yaml has a strong ETag, 128 bits of its SHA-256, and honours If-None-Match")
    func openAPIStrongTag() async throws {
        try await withLiveService { live in
            let spec = try await live.send(.get("/openapi.yaml"))
            let tag = try #require(spec.etag)
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 34, "strong, 128 bits of hex: \(tag)")
            let hex = Crypto.sha256(SystemRoutes.openAPIBody).prefix(16).map { String(format: "%02x", $0) }.joined()
            #expect(tag == "\"\(hex)\"")
            let cached = try await live.send(.get("/openapi.yaml").ifNoneMatch(tag))
            #expect(cached.status == 304)
            #expect(cached.etag == tag)
            #expect(cached.body.isEmpty)
            #expect(try await live.send(.get("/openapi.yaml").ifNoneMatch("\"other\"")).status == 200)
        }
    }
}

/// The read caches (`--cache-bytes`): what they answer is what the store holds, and /metrics shows them.
extension APITests {
    private func cacheCounter(_ metrics: String, _ name: String, _ cache: String) -> Int {
        metrics.split(separator: "\n").first { $0.hasPrefix("\(name){cache=\"\(cache)\"} ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    @Test("a layout is made once per ETag: repeated GETs hit the cache, a write or a new schema makes a new one")
    func layoutCache() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let layout = TestRequest.get(creds.layout("regular")).bearer(creds.userToken)
            let first = try await live.send(layout)
            let hitsBefore = cacheCounter(try await live.send(.get("/metrics")).text, "tabstore_cache_hits_total", "representations")
            let second = try await live.send(layout)
            let hitsAfter = cacheCounter(try await live.send(.get("/metrics")).text, "tabstore_cache_hits_total", "representations")
            #expect(second.body == first.body)
            #expect(second.etag == first.etag)
            #expect(hitsAfter == hitsBefore + 1)
            // A write: the next layout is the new revision's, not the kept one.
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Self.hideBellOperation)).status == 200)
            let written = try await live.send(layout)
            #expect(written.etag == "\"1.1.regular\"")
            #expect(written.body != first.body)
            #expect(written.text.contains("com.myApp.bell"))
            // A new schema version: a new representation again.
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBellAndNews)).status == 201)
            let reconciled = try await live.send(layout)
            #expect(reconciled.etag == "\"1.2.regular\"")
            #expect(reconciled.text.contains("com.myApp.news"))
        }
    }

    @Test("/metrics shows both read caches; a stored customization is read from memory after the write stored it")
    func cacheMetrics() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            #expect(try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Self.hideBellOperation)).status == 200)
            let before = cacheCounter(try await live.send(.get("/metrics")).text, "tabstore_cache_hits_total", "customizations")
            let read = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(read.etag == "\"1.1\"")
            let metrics = try await live.send(.get("/metrics")).text
            #expect(cacheCounter(metrics, "tabstore_cache_hits_total", "customizations") == before + 1)
            #expect(cacheCounter(metrics, "tabstore_cache_entries", "customizations") >= 1)
            #expect(cacheCounter(metrics, "tabstore_cache_bytes", "customizations") > 0)
            #expect(cacheCounter(metrics, "tabstore_cache_misses_total", "representations") >= 0)
        }
    }

    @Test("a write starts from its user's last document decoded in memory; an entry answers only for its exact bytes")
    func decodedDocuments() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken)
            #expect(
                try await live.send(patch.json(#"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#))
                    .status == 200)
            let before = cacheCounter(try await live.send(.get("/metrics")).text, "tabstore_cache_hits_total", "documents")
            let second = try await live.send(
                patch.json(#"{"operations": [{"op": "setTabBarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#))
            #expect(second.status == 200 && second.etag == "\"2.1\"")
            let metrics = try await live.send(.get("/metrics")).text
            #expect(cacheCounter(metrics, "tabstore_cache_hits_total", "documents") == before + 1)
            #expect(cacheCounter(metrics, "tabstore_cache_entries", "documents") == 1)
            // Both choices stand: the second write started from the first one's document.
            let read = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(read.field("tabs")?["com.myApp.bell"] == (try json(#"{"sidebarVisibility": "hidden", "tabBarVisibility": "hidden"}"#)))
        }

        // Other bytes under the same user are decoded, never answered from the entry.
        let documents = DecodedDocuments(budget: 1 << 20)
        let key = UserKey(appId: Identifier("app"), userId: Identifier("u"))
        var hidden = Customization.empty
        hidden.tabs[Identifier("com.myApp.bell")] = Customization.TabEntry(sidebarVisibility: .hidden, tabBarVisibility: .automatic)
        let first = JSONWriter.bytes(hidden.json(appId: key.appId, userId: key.userId))
        documents.encoded(first, from: hidden, of: key)
        #expect(try documents.decodeStored(first, of: key) == hidden)
        let other = JSONWriter.bytes(Customization.empty.json(appId: key.appId, userId: key.userId))
        #expect(try documents.decodeStored(other, of: key) == Customization.empty)
        #expect(throws: (any Error).self) { try documents.decodeStored(Array("{\"tabs\": [1]}".utf8), of: key) }
        #expect(try documents.decodeStored(other, of: key) == Customization.empty)
        // Counted as hits: the two reads of the bytes it held; the other bytes were misses.
        #expect(documents.statistics.hits == 2 && documents.statistics.misses == 2)
    }
}
