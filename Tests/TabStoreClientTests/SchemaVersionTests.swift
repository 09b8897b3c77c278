import Foundation
import Testing
@testable import TabStoreClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Version 2 of the test app: Alerts (`bell`) is gone, Garden is new.
let clientTestSchemaV2 = """
    {"items": [
      {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house",
       "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
      {"kind": "tab", "id": "com.myApp.garden", "title": "Garden", "systemImage": "leaf"},
      {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
        {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
        {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
    ]}
    """

/// Version 3: version 2 and a Pool tab.
let clientTestSchemaV3 = """
    {"items": [
      {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house",
       "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
      {"kind": "tab", "id": "com.myApp.garden", "title": "Garden", "systemImage": "leaf"},
      {"kind": "tab", "id": "com.myApp.pool", "title": "Pool", "systemImage": "drop"},
      {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
        {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
        {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
    ]}
    """

let garden: TabStoreID = "com.myApp.garden", pool: TabStoreID = "com.myApp.pool"

extension ServerFixture {
    /// Registers `schema` as the app's next version.
    func register(_ schema: String, app: TestApp) async throws {
        let registered = try await adminRequest("PUT", "/v1/apps/\(app.id)/schema", json: schema)
        guard registered.status == 201 else { throw TestFailure(description: "register schema: \(registered.status)") }
    }

    /// Retires every schema version below `minimum`.
    func setMinimumSchemaVersion(_ minimum: Int, app: TestApp) async throws {
        let patched = try await adminRequest("PATCH", "/v1/apps/\(app.id)", json: #"{"minimumSchemaVersion": \#(minimum)}"#)
        guard patched.status == 200 else {
            throw TestFailure(description: "minimumSchemaVersion: \(patched.status) \(String(decoding: patched.body, as: UTF8.self))")
        }
    }
}

/// The error `updates` ends with (nil when it ended without one), or a `TestFailure` after `timeout` seconds;
/// each customization it yields before goes to `each`.
func ending(of updates: CustomizationUpdates, timeout: Double = 20,
            each: @escaping @Sendable (Customization) async -> Void = { _ in }) async throws -> (any Error)? {
    try await withThrowingTaskGroup(of: Optional<any Error>.self) { group in
        group.addTask {
            do {
                for try await customization in updates { await each(customization) }
                return nil
            } catch {
                return error
            }
        }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            throw TestFailure(description: "the feed did not end within \(timeout) s")
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}

/// A client built with a schema version, against a real server with several versions registered: every request
/// names the version, the cache and the offline queue keep it, retired and unknown versions are typed errors.
@Suite("TabStoreClient under a schema version", .serialized)
struct SchemaVersionTests {
    static func queueFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-queue-\(UUID().uuidString)/queue.json")
    }

    /// An app with versions 1 and 2 registered.
    static func twoVersions(_ server: ServerFixture) async throws -> TestApp {
        let app = try await server.makeApp()
        try await server.register(clientTestSchemaV2, app: app)
        return app
    }

    @Test("a client built with version 1 sends it on every request and is answered under it; a client without one gets the current")
    func everyRequestNamesTheVersion() async throws {
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            let transport = RecordingTransport()
            let old = app.client(server, schemaVersion: 1, transport: transport)
            #expect(old.schemaVersion == 1)

            let empty = try await old.customization()
            #expect(empty.schemaVersion == 1 && empty.etag == "\"0.1\"")
            let written = try await old.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])  // bell is only in version 1
            #expect(written.schemaVersion == 1 && written[tab: bell].sidebarVisibility == .hidden)
            let layout = try await old.layout(sizeClass: .regular)
            #expect(layout.schemaVersion == 1 && layout.hidden == [bell])
            var choices = written
            choices.sections = [categories: SectionChoice(tabOrder: [lights, climate])]
            let replaced = try await old.replace(choices, ifMatch: written)
            #expect(replaced.schemaVersion == 1 && replaced.revision == 2)
            let history = try await old.history()
            #expect(history.items.map(\.revision) == [2, 1] && history.items.allSatisfy { $0.customization?.schemaVersion == 1 })
            let reverted = try await old.revert(to: 1)
            #expect(reverted.schemaVersion == 1 && reverted.revision == 3)
            var feed = old.updates().makeAsyncIterator()
            let first = try await feed.next()
            #expect(first?.schemaVersion == 1 && first?.revision == 3)
            try await old.reset()

            let requests = transport.exchanges
            #expect(requests.count >= 8)
            for exchange in requests {
                #expect(queryValues(exchange.query, "schemaVersion") == ["1"], "\(exchange.method) \(exchange.path)?\(exchange.query ?? "")")
            }
            #expect(requests.contains { $0.path.hasSuffix("/layout") && queryValues($0.query, "sizeClass") == ["regular"] })
            #expect(requests.contains { $0.streamed && $0.path.hasSuffix("/customization/events") })

            // Without a version: nothing sent, the current version (2) answers; bell is unknown there.
            let currentTransport = RecordingTransport()
            let current = app.client(server, transport: currentTransport)
            #expect(current.schemaVersion == nil)
            let now = try await current.customization()
            #expect(now.schemaVersion == 2 && now.etag == "\"4.2\"")
            let unknown = await thrown { try await current.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)]) }
            #expect((unknown as? TabStoreError)?.problem?.codes == [.unknownTab], "\(String(describing: unknown))")
            #expect(currentTransport.exchanges.allSatisfy { queryValues($0.query, "schemaVersion").isEmpty })
        }
    }

    @Test("two versions, one person: each writes what its version sees, the other version's choices are kept")
    func versionsSideBySide() async throws {
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            let phone = app.client(server, schemaVersion: 1)
            let tablet = app.client(server, schemaVersion: 2)
            try await phone.apply([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            let onTablet = try await tablet.apply([.setSidebarVisibility(tab: garden, visibility: .hidden)])
            #expect(onTablet.schemaVersion == 2 && onTablet.tabs[bell] == nil && onTablet[tab: garden].sidebarVisibility == .hidden)
            let onPhone = try await phone.customization()
            #expect(onPhone.schemaVersion == 1 && onPhone[tab: bell].sidebarVisibility == .hidden && onPhone.tabs[garden] == nil)
            #expect(try await phone.layout(sizeClass: .regular).hidden == [bell])
            #expect(try await tablet.layout(sizeClass: .regular).hidden == [garden])
        }
    }

    @Test("the cache is keyed by version: a representation cached under version 1 is neither sent nor served to version 2")
    func cacheKeyedByVersion() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            try await app.client(server, schemaVersion: 1).offlineQueue(file: file).enqueue([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            let transport = RecordingTransport()
            let client = app.client(server, schemaVersion: 2, transport: transport)
            #expect(try await client.customization().etag == "\"0.2\"")

            // The version 1 write goes out under version 1, and its answer is cached under version 1.
            let replay = try await client.offlineQueue(file: file).replay()
            guard case .applied(_, let answer)? = replay.events.first else {
                Issue.record("not applied: \(replay.events) \(String(describing: replay.stoppedBy))")
                return
            }
            #expect(answer?.schemaVersion == 1 && answer?.revision == 1)
            #expect(await client.cache.entry(client.resource("customization", schemaVersion: 1))?.etag == "\"1.1\"")
            #expect(await client.cache.entry(client.resource("customization"))?.etag == "\"0.2\"")

            let read = try await client.customization()
            let exchange = try #require(transport.exchanges.last)
            #expect(exchange.requestHeaders["if-none-match"] == "\"0.2\"" && exchange.status == 200)
            #expect(read.schemaVersion == 2 && read.revision == 1 && read.tabs[bell] == nil)
            #expect(try await client.customization() == read)
            #expect(transport.statuses.last == 304)
        }
    }

    @Test("after an app update the new client's queue sends the old version's writes under the old version, then its own")
    func queueAcrossUpdate() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            await server.stop()
            do {
                let before = try app.client(server, schemaVersion: 1).offlineQueue(file: file)
                let write = try await before.enqueue([.setSidebarVisibility(tab: bell, visibility: .hidden)])
                #expect(write.schemaVersion == 1)
                #expect(await before.replay().remaining == 1)
            }  // the app is updated: the old client is gone, the file stays
            try server.start()
            let transport = RecordingTransport()
            let updated = app.client(server, schemaVersion: 2, transport: transport)
            let queue = try updated.offlineQueue(file: file)
            #expect(await queue.pending.map(\.schemaVersion) == [1])
            try await queue.enqueue([.setSidebarVisibility(tab: garden, visibility: .hidden)])
            #expect(await queue.pending.map(\.schemaVersion) == [1, 2])

            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.stoppedBy == nil && replay.events.count == 2)
            let patches = transport.exchanges.filter { $0.method == "PATCH" }
            #expect(patches.map { queryValues($0.query, "schemaVersion") } == [["1"], ["2"]])
            #expect(patches.map(\.status) == [200, 200])

            let underOne = try await app.client(server, schemaVersion: 1).customization()
            #expect(underOne.revision == 2 && underOne[tab: bell].sidebarVisibility == .hidden && underOne.tabs[garden] == nil)
            let underTwo = try await updated.customization()
            #expect(underTwo[tab: garden].sidebarVisibility == .hidden && underTwo.tabs[bell] == nil)
        }
    }

    @Test("a queue file written before schema versions: its writes are read as versionless and sent without one")
    func queueFileWithoutVersions() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            let old = #"""
                {"appId":"com.myApp","format":1,"userId":"alice","writes":[{"body":"{\"operations\":[{\"op\":\"setSidebarVisibility\",\"tab\":\"com.myApp.climate\",\"visibility\":\"hidden\"}]}","enqueuedAt":1700000000,"idempotencyKey":"8C1B3D6E-1111-4E7A-9C1D-2A3B4C5D6E7F"}]}
                """#
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(old.utf8).write(to: file)
            let transport = RecordingTransport()
            let queue = try app.client(server, schemaVersion: 2, transport: transport).offlineQueue(file: file)
            #expect(await queue.pending.map(\.schemaVersion) == [nil])
            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.events.count == 1)
            let patch = try #require(transport.exchanges.first { $0.method == "PATCH" })
            #expect(queryValues(patch.query, "schemaVersion").isEmpty && patch.status == 200)
            #expect(try await app.client(server).customization()[tab: climate].sidebarVisibility == .hidden)
        }
    }

    @Test("a retired version: every call throws schemaVersionRetired (410) with the minimum, the feed ends with it, queued writes are refused")
    func retired() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            let old = app.client(server, schemaVersion: 1)
            try await old.apply([.setSidebarVisibility(tab: climate, visibility: .hidden)])
            let stale = try old.offlineQueue(file: file)
            let doomed = try await stale.enqueue([.setSidebarVisibility(tab: bell, visibility: .hidden)])
            // A stream open under version 1 when it is retired ends with the typed error too.
            let transport = RecordingTransport()
            let following = app.client(server, schemaVersion: 1, transport: transport)
            let inbox = Inbox<Customization>()
            async let followed = ending(of: following.updates()) { await inbox.push($0) }
            _ = try await inbox.wait { $0.last?.revision == 1 }
            try await server.setMinimumSchemaVersion(2, app: app)
            let streamEnd = try await followed
            #expect((streamEnd as? TabStoreError).map { if case .schemaVersionRetired = $0 { true } else { false } } == true,
                    "\(String(describing: streamEnd))")
            #expect(transport.exchanges.filter(\.streamed).map(\.status) == [200, 410])

            func isRetired(_ error: (any Error)?) -> Bool {
                guard case .schemaVersionRetired(let problem)? = error as? TabStoreError else { return false }
                return problem.status == 410 && problem.type == .schemaVersionRetired
            }
            let read = await thrown { try await old.customization() }
            #expect(isRetired(read), "\(String(describing: read))")
            let problem = (read as? TabStoreError)?.problem
            #expect(problem?.minimumSchemaVersion == 2 && problem?.currentSchemaVersion == 2, "\(String(describing: problem))")
            #expect(isRetired(await thrown { try await old.layout(sizeClass: .compact) }))
            #expect(isRetired(await thrown { try await old.apply([.setSidebarVisibility(tab: lights, visibility: .hidden)]) }))
            #expect(isRetired(await thrown { try await old.history() }))
            let end = try await ending(of: old.updates())
            #expect(isRetired(end), "\(String(describing: end))")
            #expect(TabStoreError.schemaVersionRetired(Problem(type: .schemaVersionRetired, title: "", status: 410, detail: "")).isTransient == false)

            // The updated app's queue: the retired version's write is refused for good and reported, its own goes on.
            await stale.close()  // the old app version's process is gone
            let queue = try app.client(server, schemaVersion: 2).offlineQueue(file: file)
            try await queue.enqueue([.setSidebarVisibility(tab: garden, visibility: .hidden)])
            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.events.count == 2)
            guard case .refused(let refused, let error)? = replay.events.first, case .applied(_, let after)? = replay.events.last else {
                Issue.record("unexpected: \(replay.events)")
                return
            }
            #expect(refused.idempotencyKey == doomed.idempotencyKey && isRetired(error))
            #expect(
                after?.schemaVersion == 2 && after?[tab: garden].sidebarVisibility == .hidden && after?[tab: climate].sidebarVisibility == .hidden)
        }
    }

    @Test("a version the server does not have yet: schemaVersionNotFound (404); the queue keeps its writes until it is registered")
    func notFound() async throws {
        let file = Self.queueFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withServer { server in
            let app = try await Self.twoVersions(server)
            let ahead = app.client(server, schemaVersion: 3)
            let unknown = await thrown { try await ahead.customization() }
            guard case .schemaVersionNotFound(let problem)? = unknown as? TabStoreError else {
                Issue.record("not schemaVersionNotFound: \(String(describing: unknown))")
                return
            }
            #expect(problem.status == 404 && problem.type == .schemaVersionNotFound)
            let queue = try ahead.offlineQueue(file: file)
            let write = try await queue.enqueue([.setSidebarVisibility(tab: pool, visibility: .hidden)])
            let early = await queue.replay()
            #expect(early.remaining == 1 && early.events.isEmpty)
            guard case .schemaVersionNotFound? = early.stoppedBy as? TabStoreError else {
                Issue.record("stopped by \(String(describing: early.stoppedBy))")
                return
            }
            #expect(await queue.pending == [write])

            try await server.register(clientTestSchemaV3, app: app)
            let replay = await queue.replay()
            #expect(replay.remaining == 0 && replay.events.count == 1)
            guard case .applied(_, let after)? = replay.events.first else {
                Issue.record("not applied: \(replay.events)")
                return
            }
            #expect(after?.schemaVersion == 3 && after?[tab: pool].sidebarVisibility == .hidden)
        }
    }
}
