import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

/// Several app versions at once (docs/domain.md "Several app versions at once", docs/app-updates.md): one person's devices on different app
/// versions keep each other's choices, each reads and writes under its own schema version.
@Suite("Several app versions at once", .serialized)
struct AppVersionsTests {
    static let v1 = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "tab", "id": "com.myApp.news", "title": "News", "systemImage": "newspaper"},
          {"kind": "section", "id": "com.myApp.more", "title": "More", "tabs": [
            {"kind": "tab", "id": "com.myApp.a", "title": "A", "systemImage": "a.circle"},
            {"kind": "tab", "id": "com.myApp.b", "title": "B", "systemImage": "b.circle"},
            {"kind": "tab", "id": "com.myApp.d", "title": "D", "systemImage": "d.circle"}]}]}
        """
    static let v2 = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.news", "title": "News", "systemImage": "newspaper"},
          {"kind": "tab", "id": "com.myApp.garden", "title": "Garden", "systemImage": "leaf"},
          {"kind": "section", "id": "com.myApp.more", "title": "More", "tabs": [
            {"kind": "tab", "id": "com.myApp.c", "title": "C", "systemImage": "c.circle"},
            {"kind": "tab", "id": "com.myApp.a", "title": "A", "systemImage": "a.circle"},
            {"kind": "tab", "id": "com.myApp.b", "title": "B", "systemImage": "b.circle"}]}]}
        """

    /// An app at schema v2 that served v1 first, and alice's token.
    struct Fixture {
        let app: Credentials.App
        let token: String
        var customization: String { app.userPath("alice") + "/customization" }
        var layout: String { app.userPath("alice") + "/layout" }
        func at(_ path: String, _ version: Int?, _ query: String = "") -> String {
            let parts = [query, version.map { "schemaVersion=\($0)" } ?? ""].filter { !$0.isEmpty }
            return parts.isEmpty ? path : path + "?" + parts.joined(separator: "&")
        }

        static func make(on client: any TestClient, v2: Bool = true) async throws -> Fixture {
            let app = try await Credentials.App.register(on: client, id: "com.myApp", schema: AppVersionsTests.v1)
            if v2 { #expect(try await client.send(.put("/v1/apps/com.myApp/schema").bearer(client.admin).json(AppVersionsTests.v2)).status == 201) }
            return Fixture(app: app, token: app.token(for: "alice"))
        }
    }

    static func patch(_ ops: String) -> String { #"{"operations": [\#(ops)]}"# }
    static func hide(_ tab: String, _ placement: String = "Sidebar", _ visibility: String = "hidden") -> String {
        #"{"op": "set\#(placement)Visibility", "tab": "com.myApp.\#(tab)", "visibility": "\#(visibility)"}"#
    }

    static func visibility(_ response: TestResponse, _ tab: String, _ member: String = "sidebarVisibility") -> String? {
        guard case .object(let tabs)? = response.field("tabs"), case .object(let entry)? = tabs["com.myApp." + tab],
              case .string(let value)? = entry[member] else { return nil }
        return value
    }

    static func order(_ response: TestResponse, _ section: String = "com.myApp.more") -> [String]? {
        guard case .object(let sections)? = response.field("sections"), case .object(let entry)? = sections[section],
              case .array(let order)? = entry["tabOrder"] else { return nil }
        return order.compactMap { if case .string(let id) = $0 { id.replacingOccurrences(of: "com.myApp.", with: "") } else { nil } }
    }

    @Test("the issue's scenario: the iPhone's hide survives the iPad's writes, each reads and lays out under its own version",
          arguments: PostgresTestCluster.backends)
    func scenario(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: Self.v1)
            let fixture = Fixture(app: app, token: app.token(for: "alice"))
            let token = fixture.token
            // 1. App 1.0: the iPhone hides Alerts.
            #expect(try await live.send(.patch(fixture.customization).bearer(token).json(Self.patch(Self.hide("bell")))).status == 200)
            // 2. App 1.1 ships; the iPad hides Garden.
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema").bearer(live.admin).json(Self.v2)).status == 201)
            let ipad = try await live.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("garden"))))
            #expect(ipad.status == 200 && Self.visibility(ipad, "garden") == "hidden" && Self.visibility(ipad, "bell") == nil)
            #expect(ipad.etag == "\"2.2\"")
            // The iPhone's choice survived; it sees no Garden.
            let phone = try await live.send(.get(fixture.at(fixture.customization, 1)).bearer(token))
            #expect(phone.status == 200 && phone.etag == "\"2.1\"" && phone.field("schemaVersion") == .integer(1))
            #expect(Self.visibility(phone, "bell") == "hidden" && Self.visibility(phone, "garden") == nil)
            // 3. The iPhone can still change Alerts.
            let changed = try await live.send(
                .patch(fixture.at(fixture.customization, 1)).bearer(token).json(Self.patch(Self.hide("bell", "Sidebar", "visible"))))
            #expect(changed.status == 200 && Self.visibility(changed, "bell") == "visible")
            let after = try await live.send(.get(fixture.at(fixture.customization, 2)).bearer(token))
            #expect(Self.visibility(after, "garden") == "hidden", "the iPad's choice survived the iPhone's write")
            // 4. Each device's layout is its own version's.
            let layout1 = try await live.send(.get(fixture.at(fixture.layout, 1, "sizeClass=regular")).bearer(token))
            let layout2 = try await live.send(.get(fixture.at(fixture.layout, 2, "sizeClass=regular")).bearer(token))
            #expect(layout1.ids("sidebar") == ["com.myApp.home", "com.myApp.bell", "com.myApp.news", "com.myApp.more"])
            #expect(layout2.ids("sidebar") == ["com.myApp.home", "com.myApp.news", "com.myApp.more"] && layout2.ids("hidden") == ["com.myApp.garden"])
            #expect(layout1.etag == "\"3.1.regular\"" && layout2.etag == "\"3.2.regular\"")
            // Without the parameter: the current version, as before.
            #expect(try await live.send(.get(fixture.customization).bearer(token)).etag == "\"3.2\"")
        }
    }

    @Test("a version below the minimum is 410 schema-version-retired; one never registered is 404; a malformed one 400")
    func retiredAndUnknownVersions() async throws {
        try await withInProcessAPI { api in
            let fixture = try await Fixture.make(on: api)
            let token = fixture.token
            for (version, status, type) in [("3", 404, "schema-version-not-found"), ("0", 400, "invalid-parameter"), ("x", 400, "invalid-parameter"),
                                            ("99999999999999999999", 400, "invalid-parameter")] {
                let answer = await api.send(.get(fixture.customization + "?schemaVersion=" + version).bearer(token))
                #expect(answer.status == status && answer.problemType == "urn:tabstore:problem:" + type, "\(version)")
            }
            #expect(await api.send(.get("/v1/apps/com.myApp/stats?schemaVersion=abc").bearer(api.admin)).status == 400)
            #expect(await api.send(.get("/v1/apps/com.myApp/stats?schemaVersion=1").bearer(api.admin)).status == 200)
            #expect(
                await api.send(.patch("/v1/apps/com.myApp?dryRun=true&limit=101").bearer(api.admin).json(#"{"minimumSchemaVersion": 2}"#)).status
                    == 400)
            #expect(await api.send(.patch("/v1/apps/com.myApp").bearer(api.admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 200)
            let paths = [fixture.customization, fixture.layout + "?sizeClass=compact", fixture.customization + "/history",
                         fixture.customization + "/events"]
            for path in paths {
                let separator = path.contains("?") ? "&" : "?"
                let answer = await api.send(.get(path + separator + "schemaVersion=1").bearer(token))
                #expect(answer.status == 410 && answer.problemType == "urn:tabstore:problem:schema-version-retired", "\(path)")
            }
            let writes: [TestRequest] = [.patch(fixture.at(fixture.customization, 1)).json(Self.patch(Self.hide("bell"))),
                                         .put(fixture.at(fixture.customization, 1)).json("{}"), .delete(fixture.at(fixture.customization, 1)),
                                         .post(fixture.at(fixture.customization + "/revert", 1)).json(#"{"toRevision": 0}"#)]
            for write in writes {
                #expect(await api.send(write.bearer(token)).status == 410, "\(write.method)")
            }
            #expect(await api.send(.get(fixture.at(fixture.customization, 2)).bearer(token)).status == 200)
        }
    }

    @Test("writes under one version change only what it sees: visibilities, lists and orders of other versions stay",
          arguments: PostgresTestCluster.backends)
    func writesKeepOtherVersionsChoices(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let fixture = try await Fixture.make(on: live)
            let token = fixture.token
            func send(_ version: Int, _ ops: String) async throws -> TestResponse {
                let answer = try await live.send(.patch(fixture.at(fixture.customization, version)).bearer(token).json(Self.patch(ops)))
                #expect(answer.status == 200, "\(answer.text)")
                return answer
            }
            // v2 orders the section (C first); v1 then orders the ids it knows (D is v1's only, so v1 must name it).
            _ = try await send(2, #"{"op": "setTabOrder", "section": "com.myApp.more", "tabOrder": ["com.myApp.b", "com.myApp.c", "com.myApp.a"]}"#)
            let v1 = try await send(
                1, #"{"op": "setTabOrder", "section": "com.myApp.more", "tabOrder": ["com.myApp.d", "com.myApp.a", "com.myApp.b"]}"#)
            #expect(Self.order(v1) == ["d", "a", "b"])
            // v2 sees v1's relative order of A and B, with C where it stood after B.
            let v2 = try await live.send(.get(fixture.at(fixture.customization, 2)).bearer(token))
            #expect(Self.order(v2) == ["a", "b", "c"])
            // v2 moves C first: D (v2 lacks it) keeps its place: first, where v1 put it (no id preceded it).
            _ = try await send(2, #"{"op": "moveTab", "section": "com.myApp.more", "tab": "com.myApp.c", "toIndex": 0}"#)
            let stored = try await live.send(.get(fixture.app.userPath("alice") + "/export").bearer(live.admin))
            #expect(
                Self.order(TestResponse(status: 200, headers: stored.headers, body: Array(JSONWriter.string(stored.field("customization")!).utf8)))
                    == ["d", "c", "a", "b"])
            #expect(Self.order(try await live.send(.get(fixture.at(fixture.customization, 1)).bearer(token))) == ["d", "a", "b"])
            // A PUT under v2 replaces what v2 sees; v1's Alerts choice stays.
            _ = try await send(1, Self.hide("bell"))
            #expect(
                try await live.send(
                    .put(fixture.at(fixture.customization, 2)).bearer(token).json(#"{"tabs": {"com.myApp.garden": {"sidebarVisibility": "hidden"}}}"#)
                ).status == 200)
            let phone = try await live.send(.get(fixture.at(fixture.customization, 1)).bearer(token))
            #expect(Self.visibility(phone, "bell") == "hidden" && Self.order(phone) == nil)
            // A DELETE under v2 forgets what v2 sees, not Alerts.
            #expect(try await live.send(.delete(fixture.at(fixture.customization, 2)).bearer(token)).status == 204)
            let ipad = try await live.send(.get(fixture.at(fixture.customization, 2)).bearer(token))
            #expect(Self.visibility(ipad, "garden") == nil)
            #expect(Self.visibility(try await live.send(.get(fixture.at(fixture.customization, 1)).bearer(token)), "bell") == "hidden")
            // The v2 client never reads an id v2 lacks, nor names one.
            #expect(!ipad.text.contains("com.myApp.bell") && !ipad.text.contains("com.myApp.d\""))
            let refused = try await live.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("bell"))))
            #expect(refused.status == 422 && refused.codes == ["unknown-tab"])
        }
    }

    @Test("a write that changes nothing keeps the revision whichever version wrote last (PUT of its own view, a value already set, no operations)")
    func noOpAcrossVersions() async throws {
        try await withInProcessAPI { api in
            let fixture = try await Fixture.make(on: api)
            let token = fixture.token
            #expect(await api.send(.patch(fixture.at(fixture.customization, 1)).bearer(token).json(Self.patch(Self.hide("news")))).revision == 1)
            for version in [2, 1, 2, 1] {
                let view = await api.send(.get(fixture.at(fixture.customization, version)).bearer(token))
                #expect(await api.send(.put(fixture.at(fixture.customization, version)).bearer(token).json(bytes: view.body)).revision == 1)
                #expect(
                    await api.send(.patch(fixture.at(fixture.customization, version)).bearer(token).json(Self.patch(Self.hide("news")))).revision == 1
                )
                #expect(await api.send(.patch(fixture.at(fixture.customization, version)).bearer(token).json(#"{"operations": []}"#)).revision == 1)
            }
            let history = await api.send(.get(fixture.customization + "/history").bearer(token))
            guard case .array(let items)? = history.field("items") else { Issue.record("history"); return }
            #expect(items.count == 1)
        }
    }

    @Test("a section whose data-driven tabs have another prefix in another version keeps both versions' entries and choices")
    func dynamicListsAcrossPrefixes() async throws {
        try await withInProcessAPI { api in
            let section = #"{"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "PREFIX"}, "tabs": []}"#
            func schema(_ prefix: String) -> String {
                #"{"items": [{"kind": "tab", "id": "home", "title": "Home", "systemImage": "house"}, \#(section.replacingOccurrences(of: "PREFIX", with: prefix))]}"#
            }
            let app = try await Credentials.App.register(on: api, id: "dyn.app", schema: schema("d."))
            #expect(await api.send(.put("/v1/apps/dyn.app/schema").bearer(api.admin).json(schema("e."))).status == 201)
            let token = app.token(for: "u")
            let path = app.userPath("u") + "/customization"
            func list(_ ids: [String]) -> String {
                #"{"op": "setDynamicTabs", "section": "lists", "tabs": [\#(ids.map { #"{"id": "\#($0)", "title": "\#($0)"}"# }.joined(separator: ", "))]}"#
            }
            let v1 = await api.send(
                .patch(path + "?schemaVersion=1").bearer(token).json(
                    Self.patch(list(["d.1", "d.2"]) + #", {"op": "setSidebarVisibility", "tab": "d.1", "visibility": "hidden"}"#)))
            #expect(v1.status == 200)
            let v2 = await api.send(.patch(path + "?schemaVersion=2").bearer(token).json(Self.patch(list(["e.1"]))))
            #expect(v2.status == 200 && v2.text.contains("e.1") && !v2.text.contains("d.1"))
            let phone = await api.send(.get(path + "?schemaVersion=1").bearer(token))
            #expect(phone.text.contains(#"{"id":"d.1","title":"d.1"},{"id":"d.2","title":"d.2"}"#) && !phone.text.contains("e.1"))
            #expect(phone.text.contains(#""d.1":{"sidebarVisibility":"hidden""#))
            // v1 drops d.2 from its list: v2's e.1 stays.
            #expect(await api.send(.patch(path + "?schemaVersion=1").bearer(token).json(Self.patch(list(["d.1"])))).status == 200)
            let ipad = await api.send(.get(path + "?schemaVersion=2").bearer(token))
            #expect(ipad.text.contains(#"[{"id":"e.1","title":"e.1"}]"#))
        }
    }

    @Test(
        "choices whose kind no supported version has go at the next write: a section entry for what is only a tab, an order entry outside its section"
    )
    func kindOfIdMatters() async throws {
        try await withInProcessAPI { api in
            // v1: X is a section holding a and b; v2: X is a tab, and a is in section Y with c.
            let v1 =
                #"{"items": [{"kind": "tab", "id": "home", "title": "Home", "systemImage": "house"}, {"kind": "section", "id": "X", "title": "X", "tabs": [{"kind": "tab", "id": "a", "title": "a", "systemImage": "a.circle"}, {"kind": "tab", "id": "b", "title": "b", "systemImage": "b.circle"}]}]}"#
            let v2 =
                #"{"items": [{"kind": "tab", "id": "home", "title": "Home", "systemImage": "house"}, {"kind": "tab", "id": "X", "title": "X", "systemImage": "x.circle"}, {"kind": "section", "id": "Y", "title": "Y", "tabs": [{"kind": "tab", "id": "a", "title": "a", "systemImage": "a.circle"}, {"kind": "tab", "id": "c", "title": "c", "systemImage": "c.circle"}]}]}"#
            let app = try await Credentials.App.register(on: api, id: "kind.app", schema: v1)
            #expect(await api.send(.put("/v1/apps/kind.app/schema").bearer(api.admin).json(v2)).status == 201)
            let token = app.token(for: "u")
            let path = app.userPath("u") + "/customization"
            let ops =
                #"{"op": "setTabOrder", "section": "X", "tabOrder": ["b", "a"]}, {"op": "setSectionExpanded", "section": "X", "expanded": false}"#
            #expect(await api.send(.patch(path + "?schemaVersion=1").bearer(token).json(Self.patch(ops))).status == 200)
            #expect(await api.send(.patch("/v1/apps/kind.app").bearer(api.admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 200)
            #expect(
                await api.send(
                    .patch(path + "?schemaVersion=2").bearer(token).json(Self.patch(Self.hide("c").replacingOccurrences(of: "com.myApp.", with: "")))
                ).status == 200)
            let stored = await api.send(.get(app.userPath("u") + "/export").bearer(api.admin))
            guard case .object(let export)? = try? stored.json(), let document = export["customization"] else { Issue.record("export"); return }
            #expect(JSONWriter.string(document).contains(#""sections":{}"#), "X is only a tab now: its section entry is gone")
        }
    }

    @Test("If-Match names one version's representation: a v1 ETag is stale for a v2 write; a PUT's schemaVersion must be the writer's")
    func preconditionsPerVersion() async throws {
        try await withInProcessAPI { api in
            let fixture = try await Fixture.make(on: api)
            let token = fixture.token
            let v1 = await api.send(.patch(fixture.at(fixture.customization, 1)).bearer(token).json(Self.patch(Self.hide("bell"))))
            #expect(v1.etag == "\"1.1\"")
            let stale = await api.send(
                .patch(fixture.at(fixture.customization, 2)).bearer(token).ifMatch("\"1.1\"").json(Self.patch(Self.hide("garden"))))
            #expect(stale.status == 412 && stale.etag == "\"1.2\"")
            #expect(
                await api.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).ifMatch("\"1.2\"").json(Self.patch(Self.hide("garden"))))
                    .status == 200)
            #expect(await api.send(.get(fixture.at(fixture.customization, 1)).bearer(token).ifNoneMatch("\"2.1\"")).status == 304)
            #expect(await api.send(.get(fixture.at(fixture.customization, 1)).bearer(token).ifNoneMatch("\"2.2\"")).status == 200)
            let put = await api.send(.put(fixture.at(fixture.customization, 1)).bearer(token).json(#"{"schemaVersion": 2, "tabs": {}}"#))
            #expect(put.status == 412)
            #expect(await api.send(.put(fixture.at(fixture.customization, 1)).bearer(token).json(#"{"schemaVersion": 1, "tabs": {}}"#)).status == 200)
        }
    }

    @Test("an Idempotency-Key names one request under one version: a repeat under another version is 422, not the other's answer")
    func idempotencyPerVersion() async throws {
        try await withInProcessAPI { api in
            let fixture = try await Fixture.make(on: api)
            let key = ("Idempotency-Key", "queued-1")
            let v1 = await api.send(
                .patch(fixture.at(fixture.customization, 1)).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(v1.status == 200 && v1.etag == "\"1.1\"")
            let again = await api.send(
                .patch(fixture.at(fixture.customization, 1)).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(again.status == 200 && again.header("Idempotent-Replayed") == "true" && again.body == v1.body)
            let other = await api.send(
                .patch(fixture.at(fixture.customization, 2)).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(other.status == 422 && other.problemType == "urn:tabstore:problem:idempotency-key-reused")
            let current = await api.send(.patch(fixture.customization).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(current.status == 422, "without the parameter it is another request too")
        }
    }
}
