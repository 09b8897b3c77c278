import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreSupport
import TabStoreTestSupport

/// Export and erase of a user's data, per app and across apps (docs/devices.md "Export and erase (operator)").
@Suite("Export and erase", .serialized)
struct UserDataTests {
    /// Alice with two revisions and a keyed write in both apps.
    static func aliceEverywhere(_ client: any TestClient, _ creds: Credentials) async throws {
        for (app, token) in [(creds.app, creds.userToken), (creds.otherApp, creds.otherAppToken)] {
            let path = app.userPath(Credentials.user) + "/customization"
            _ = try await client.send(.patch(path).bearer(token).header("Idempotency-Key", "k").json(Sync.hide("climate")))
            _ = try await client.send(.patch(path).bearer(token).json(Sync.hide("bell")))
        }
    }

    @Test("the export of one app holds the customization as served, every kept revision and the keys", arguments: PostgresTestCluster.backends)
    func exportOneApp(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            try await Self.aliceEverywhere(live, creds)
            let export = try await live.send(.get(creds.app.userPath(Credentials.user) + "/export").bearer(live.admin))
            #expect(export.status == 200 && export.header("Cache-Control") == "no-store")
            #expect(export.field("appId") == "app.one" && export.field("userId") == "alice")
            let served = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(export.field("customization") == (try served.json()))
            #expect(export.field("history")?.items.compactMap { $0["revision"]?.integer } == [2, 1])
            #expect(export.field("idempotencyKeys")?.items.map { $0["key"] } == [.string("k")])
            #expect(export.field("idempotencyKeys")?.items.first?["status"] == .integer(200))
        }
    }

    @Test("an export lists only idempotency keys still within the 24 hours, though an expired one may still be stored")
    func exportSkipsExpiredKeys() async throws {
        let clock = TestClock()
        try await withInProcessAPI(configure: { $0.clock = { clock.now } }) { api in
            let creds = try await Credentials.register(on: api)
            let path = creds.customization
            #expect(await api.send(.patch(path).bearer(api.admin).header("Idempotency-Key", "old").json(Sync.hide("climate"))).status == 200)
            clock.advance(86_401)
            #expect(await api.send(.patch(path).bearer(api.admin).header("Idempotency-Key", "new").json(Sync.hide("bell"))).status == 200)
            let export = await api.send(.get(creds.app.userPath(Credentials.user) + "/export").bearer(api.admin))
            #expect(export.field("idempotencyKeys")?.items.map { $0["key"] } == [.string("new")])
        }
    }

    @Test("a user with nothing stored exports the empty customization at revision 0; an unknown app is 404")
    func exportNothing() async throws {
        try await withInProcessAPI { api in
            _ = try await Credentials.register(on: api)
            let export = await api.send(.get("/v1/apps/app.one/users/nobody/export").bearer(api.admin))
            #expect(export.status == 200 && export.field("customization")?["revision"] == .integer(0))
            #expect(export.field("history")?.items.isEmpty == true && export.field("idempotencyKeys")?.items.isEmpty == true)
            #expect(await api.send(.get("/v1/apps/no.such.app/users/alice/export").bearer(api.admin)).status == 404)
            #expect(await api.send(.delete("/v1/apps/no.such.app/users/alice").bearer(api.admin)).status == 404)
            #expect(await api.send(.delete("/v1/apps/app.one/users/nobody").bearer(api.admin)).status == 204)
        }
    }

    @Test(
        "erasing in one app removes customization, history and keys there only; revisions continue above the old ones",
        arguments: PostgresTestCluster.backends)
    func eraseOneApp(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            try await Self.aliceEverywhere(live, creds)
            #expect(try await live.send(.delete(creds.app.userPath(Credentials.user)).bearer(live.admin)).status == 204)
            let after = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(after.revision == 0 && Sync.hidden(after) == [] && after.etag == "\"0.1\"")
            #expect(try await live.send(.get(creds.customization + "/history").bearer(creds.userToken)).field("items")?.items.isEmpty == true)
            // The key is gone with the rest: the same request is applied again, as revision 3 (never 1 again).
            let again = try await live.send(
                .patch(creds.customization).bearer(creds.userToken).header("Idempotency-Key", "k").json(Sync.hide("climate")))
            #expect(again.status == 200 && again.revision == 3 && again.header("Idempotent-Replayed") == nil)
            let untouched = try await live.send(.get(creds.otherApp.userPath(Credentials.user) + "/customization").bearer(creds.otherAppToken))
            #expect(untouched.revision == 2)
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.metric("tabstore_customizations") == 2 && metrics.metric("tabstore_history_rows") == 3)
        }
    }

    @Test("export and erase across apps: one call each, every app, revisions continue in each", arguments: PostgresTestCluster.backends)
    func acrossApps(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            try await Self.aliceEverywhere(live, creds)
            _ = try await live.send(
                .patch(creds.app.userPath(Credentials.otherUser) + "/customization").bearer(creds.otherUserToken).json(Sync.hide("bell")))
            let export = try await live.send(.get("/v1/users/alice/export").bearer(live.admin))
            #expect(export.status == 200 && export.field("userId") == "alice")
            let apps = export.field("apps")?.items ?? []
            #expect(apps.map { $0["appId"] } == [.string("app.one"), .string("app.two")])
            #expect(apps.allSatisfy { $0["history"]?.items.count == 2 && $0["customization"]?["revision"] == .integer(2) })

            #expect(try await live.send(.delete("/v1/users/alice").bearer(live.admin)).status == 204)
            #expect(try await live.send(.get("/v1/users/alice/export").bearer(live.admin)).field("apps")?.items.isEmpty == true)
            for (app, token) in [(creds.app, creds.userToken), (creds.otherApp, creds.otherAppToken)] {
                let path = app.userPath(Credentials.user) + "/customization"
                #expect(try await live.send(.get(path).bearer(token)).revision == 0)
                #expect(try await live.send(.patch(path).bearer(token).json(Sync.hide("lights"))).revision == 3)
            }
            // Another user of the same app keeps everything.
            #expect(
                try await live.send(.get(creds.app.userPath(Credentials.otherUser) + "/customization").bearer(creds.otherUserToken)).revision == 1)
        }
    }

    @Test("export and erase are for the operator only: users get 403, anonymous callers 401")
    func operatorOnly() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api)
            _ = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Sync.hide("bell")))
            let requests: [TestRequest] = [.get(creds.app.userPath("alice") + "/export"), .delete(creds.app.userPath("alice")),
                                           .get("/v1/users/alice/export"), .delete("/v1/users/alice")]
            for request in requests {
                #expect(await api.send(request.bearer(creds.userToken)).status == 403, "\(request.method) \(request.target)")
                #expect(await api.send(request).status == 401, "\(request.method) \(request.target)")
            }
            #expect(await api.send(.get(creds.customization).bearer(creds.userToken)).revision == 1, "nothing was erased")
        }
    }

    @Test("deleting an app takes its history and keys with it; the counts in /metrics follow", arguments: PostgresTestCluster.backends)
    func deleteAppCounts(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            try await Self.aliceEverywhere(live, creds)
            #expect(try await live.send(.get("/metrics")).metric("tabstore_history_rows") == 4)
            #expect(try await live.send(.delete("/v1/apps/app.two").bearer(live.admin)).status == 204)
            let metrics = try await live.send(.get("/metrics"))
            #expect(metrics.metric("tabstore_history_rows") == 2 && metrics.metric("tabstore_customizations") == 1)
            #expect(try await live.send(.get("/v1/users/alice/export").bearer(live.admin)).field("apps")?.items.count == 1)
        }
    }
}
