import Foundation
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreDomain
@testable import TabStoreStorage
@testable import TabStoreSupport

/// Several app versions at once (DOMAIN.md section 7, docs/app-updates.md): one person's devices on different app
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
            let changed = try await live.send(.patch(fixture.at(fixture.customization, 1)).bearer(token).json(Self.patch(Self.hide("bell", "Sidebar", "visible"))))
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
            #expect(await api.send(.patch("/v1/apps/com.myApp?dryRun=true&limit=101").bearer(api.admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 400)
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
            let v1 = try await send(1, #"{"op": "setTabOrder", "section": "com.myApp.more", "tabOrder": ["com.myApp.d", "com.myApp.a", "com.myApp.b"]}"#)
            #expect(Self.order(v1) == ["d", "a", "b"])
            // v2 sees v1's relative order of A and B, with C where it stood after B.
            let v2 = try await live.send(.get(fixture.at(fixture.customization, 2)).bearer(token))
            #expect(Self.order(v2) == ["a", "b", "c"])
            // v2 moves C first: D (v2 lacks it) keeps its place: first, where v1 put it (no id preceded it).
            _ = try await send(2, #"{"op": "moveTab", "section": "com.myApp.more", "tab": "com.myApp.c", "toIndex": 0}"#)
            let stored = try await live.send(.get(fixture.app.userPath("alice") + "/export").bearer(live.admin))
            #expect(Self.order(TestResponse(status: 200, headers: stored.headers, body: Array(JSONWriter.string(stored.field("customization")!).utf8))) == ["d", "c", "a", "b"])
            #expect(Self.order(try await live.send(.get(fixture.at(fixture.customization, 1)).bearer(token))) == ["d", "a", "b"])
            // A PUT under v2 replaces what v2 sees; v1's Alerts choice stays.
            _ = try await send(1, Self.hide("bell"))
            #expect(try await live.send(.put(fixture.at(fixture.customization, 2)).bearer(token).json(#"{"tabs": {"com.myApp.garden": {"sidebarVisibility": "hidden"}}}"#)).status == 200)
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
                #expect(await api.send(.patch(fixture.at(fixture.customization, version)).bearer(token).json(Self.patch(Self.hide("news")))).revision == 1)
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
            let v1 = await api.send(.patch(path + "?schemaVersion=1").bearer(token).json(Self.patch(list(["d.1", "d.2"]) + #", {"op": "setSidebarVisibility", "tab": "d.1", "visibility": "hidden"}"#)))
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

    @Test("choices whose kind no supported version has go at the next write: a section entry for what is only a tab, an order entry outside its section")
    func kindOfIdMatters() async throws {
        try await withInProcessAPI { api in
            // v1: X is a section holding a and b; v2: X is a tab, and a is in section Y with c.
            let v1 = #"{"items": [{"kind": "tab", "id": "home", "title": "Home", "systemImage": "house"}, {"kind": "section", "id": "X", "title": "X", "tabs": [{"kind": "tab", "id": "a", "title": "a", "systemImage": "a.circle"}, {"kind": "tab", "id": "b", "title": "b", "systemImage": "b.circle"}]}]}"#
            let v2 = #"{"items": [{"kind": "tab", "id": "home", "title": "Home", "systemImage": "house"}, {"kind": "tab", "id": "X", "title": "X", "systemImage": "x.circle"}, {"kind": "section", "id": "Y", "title": "Y", "tabs": [{"kind": "tab", "id": "a", "title": "a", "systemImage": "a.circle"}, {"kind": "tab", "id": "c", "title": "c", "systemImage": "c.circle"}]}]}"#
            let app = try await Credentials.App.register(on: api, id: "kind.app", schema: v1)
            #expect(await api.send(.put("/v1/apps/kind.app/schema").bearer(api.admin).json(v2)).status == 201)
            let token = app.token(for: "u")
            let path = app.userPath("u") + "/customization"
            let ops = #"{"op": "setTabOrder", "section": "X", "tabOrder": ["b", "a"]}, {"op": "setSectionExpanded", "section": "X", "expanded": false}"#
            #expect(await api.send(.patch(path + "?schemaVersion=1").bearer(token).json(Self.patch(ops))).status == 200)
            #expect(await api.send(.patch("/v1/apps/kind.app").bearer(api.admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 200)
            #expect(await api.send(.patch(path + "?schemaVersion=2").bearer(token).json(Self.patch(Self.hide("c").replacingOccurrences(of: "com.myApp.", with: "")))).status == 200)
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
            let stale = await api.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).ifMatch("\"1.1\"").json(Self.patch(Self.hide("garden"))))
            #expect(stale.status == 412 && stale.etag == "\"1.2\"")
            #expect(await api.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).ifMatch("\"1.2\"").json(Self.patch(Self.hide("garden")))).status == 200)
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
            let v1 = await api.send(.patch(fixture.at(fixture.customization, 1)).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(v1.status == 200 && v1.etag == "\"1.1\"")
            let again = await api.send(.patch(fixture.at(fixture.customization, 1)).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(again.status == 200 && again.header("Idempotent-Replayed") == "true" && again.body == v1.body)
            let other = await api.send(.patch(fixture.at(fixture.customization, 2)).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(other.status == 422 && other.problemType == "urn:tabstore:problem:idempotency-key-reused")
            let current = await api.send(.patch(fixture.customization).bearer(fixture.token).headers([key]).json(Self.patch(Self.hide("news"))))
            #expect(current.status == 422, "without the parameter it is another request too")
        }
    }

    @Test("the minimum: dry run lists the users and ids it would drop, raising drops at the next write, lowering after that is 409",
          arguments: PostgresTestCluster.backends)
    func minimumSchemaVersion(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let fixture = try await Fixture.make(on: live, v2: false)
            let admin = live.admin
            for user in ["bob", "alice"] {
                let answer = try await live.send(.patch(fixture.app.userPath(user) + "/customization").bearer(admin).json(Self.patch(Self.hide("bell"))))
                #expect(answer.status == 200)
            }
            _ = try await live.send(.patch(fixture.app.userPath("carol") + "/customization").bearer(admin).json(Self.patch(Self.hide("news"))))
            #expect(try await live.send(.get("/v1/apps/com.myApp").bearer(admin)).field("minimumSchemaVersion") == .integer(1))
            // Above the current version: 422.
            let above = try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#))
            #expect(above.status == 422 && above.codes == ["unknown-schema-version"])
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema").bearer(admin).json(Self.v2)).status == 201)
            for body in [#"{"minimumSchemaVersion": "2"}"#, #"{"minimum": 2}"#, "{}"] {
                #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(body)).status == 400, "\(body)")
            }
            #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(fixture.token).json(#"{"minimumSchemaVersion": 2}"#)).status == 403)
            let dry = try await live.send(.patch("/v1/apps/com.myApp?dryRun=true&limit=1").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#))
            #expect(dry.status == 200 && dry.field("customizationsAffected") == .integer(2) && dry.field("customizationsChecked") == .integer(3))
            #expect(dry.ids("droppedIds") == ["com.myApp.bell"])
            #expect(dry.text.contains(#""affectedUsers":[{"userId":"alice","droppedIds":["com.myApp.bell"]}]"#) && dry.field("affectedUsersNext") == .string("alice"))
            let page2 = try await live.send(.patch("/v1/apps/com.myApp?dryRun=true&limit=1&after=alice").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#))
            #expect(page2.text.contains(#""userId":"bob""#) && page2.field("affectedUsersNext") == .null)
            #expect(try await live.send(.get("/v1/apps/com.myApp").bearer(admin)).field("minimumSchemaVersion") == .integer(1), "the dry run stored nothing")
            // Raise, and lower again before any write dropped anything: allowed.
            #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#)).field("minimumSchemaVersion") == .integer(2))
            #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 1}"#)).status == 200)
            #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 200)
            // Nothing dropped until alice writes; then Alerts is gone from what is stored, and the minimum cannot go back.
            let before = try await live.send(.get(fixture.app.userPath("alice") + "/export").bearer(admin))
            #expect(before.text.contains("com.myApp.bell"))
            #expect(try await live.send(.patch(fixture.customization).bearer(fixture.token).json(Self.patch(Self.hide("garden")))).status == 200)
            let exported = try await live.send(.get(fixture.app.userPath("alice") + "/export").bearer(admin))
            guard case .object(let export)? = try? exported.json(), let stored = export["customization"] else { Issue.record("export"); return }
            #expect(!JSONWriter.string(stored).contains("com.myApp.bell"))
            let lower = try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 1}"#))
            #expect(lower.status == 409 && lower.problemType == "urn:tabstore:problem:minimum-schema-version-applied")
            let lowerDry = try await live.send(.patch("/v1/apps/com.myApp?dryRun=true").bearer(admin).json(#"{"minimumSchemaVersion": 1}"#))
            #expect(lowerDry.status == 409, "the dry run says what the change would answer")
            // Bob's stored choice stays until his next write (nothing is dropped at once).
            #expect(try await live.send(.get(fixture.app.userPath("bob") + "/export").bearer(admin)).text.contains("com.myApp.bell"))
            let stats = try await live.send(.get("/v1/apps/com.myApp/stats").bearer(admin))
            #expect(stats.field("minimumSchemaVersion") == .integer(2) && stats.field("retiredWriters") == .integer(2))
            #expect(stats.text.contains(#""versions":[{"schemaVersion":2,"lastWrittenBy":1}]"#))
            // A re-created app's versions start above its predecessor's: its minimum is its first version.
            #expect(try await live.send(.delete("/v1/apps/com.myApp").bearer(admin)).status == 204)
            _ = try await Credentials.App.register(on: live, id: "com.myApp", schema: Self.v1)
            let recreated = try await live.send(.get("/v1/apps/com.myApp").bearer(admin))
            #expect(recreated.field("schemaVersion") == .integer(3) && recreated.field("minimumSchemaVersion") == .integer(3))
            #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 1}"#)).status == 422)
            #expect(try await live.send(.get(fixture.at(fixture.customization, 1)).bearer(live.admin)).status == 404)
        }
    }

    @Test("history under a version shows each revision as that version sees it; revert keeps every version's choices")
    func historyAndRevert() async throws {
        try await withInProcessAPI { api in
            let fixture = try await Fixture.make(on: api)
            let token = fixture.token
            #expect(await api.send(.patch(fixture.at(fixture.customization, 1)).bearer(token).json(Self.patch(Self.hide("bell")))).status == 200)
            #expect(await api.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("garden")))).status == 200)
            #expect(await api.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("news")))).status == 200)
            let asStored = await api.send(.get(fixture.customization + "/history").bearer(token))
            #expect(asStored.text.contains("com.myApp.bell") && asStored.text.contains("com.myApp.garden"))
            // Each item's customization under the version (the operations are the requests as sent, whoever sent them).
            func documents(_ page: TestResponse) -> String {
                guard case .array(let items)? = page.field("items") else { return "" }
                return items.map { item in
                    if case .object(let object) = item, let document = object["customization"] { JSONWriter.string(document) } else { "" }
                }.joined(separator: "\n")
            }
            let underV1 = await api.send(.get(fixture.at(fixture.customization + "/history", 1)).bearer(token))
            #expect(underV1.status == 200 && documents(underV1).contains("com.myApp.bell") && !documents(underV1).contains("com.myApp.garden"))
            #expect(!documents(underV1).contains(#""schemaVersion":2"#))
            let underV2 = await api.send(.get(fixture.at(fixture.customization + "/history", 2)).bearer(token))
            #expect(!documents(underV2).contains("com.myApp.bell") && documents(underV2).contains("com.myApp.garden"))
            // Revert (from v2) to revision 2: Garden hidden, News not; Alerts (v1's) is kept too.
            let reverted = await api.send(.post(fixture.at(fixture.customization + "/revert", 2)).bearer(token).json(#"{"toRevision": 2}"#))
            #expect(reverted.status == 200 && reverted.revision == 4 && Self.visibility(reverted, "news") == nil && Self.visibility(reverted, "garden") == "hidden")
            #expect(Self.visibility(await api.send(.get(fixture.at(fixture.customization, 1)).bearer(token)), "bell") == "hidden")
            // Revert to revision 1 from v2: only Alerts (which v2 does not show).
            let back = await api.send(.post(fixture.at(fixture.customization + "/revert", 2)).bearer(token).json(#"{"toRevision": 1}"#))
            #expect(back.status == 200 && Self.visibility(back, "garden") == nil && !back.text.contains("com.myApp.bell"))
            #expect(Self.visibility(await api.send(.get(fixture.at(fixture.customization, 1)).bearer(token)), "bell") == "hidden")
        }
    }

    @Test("a change feed and a long poll under a version get the state under it; raising the minimum ends a retired stream")
    func feedsPerVersion() async throws {
        try await withLiveService { live in
            let fixture = try await Fixture.make(on: live)
            let token = fixture.token
            let port = live.port
            let (phone, ipad) = try await offPool {
                (try SSEClient(port: port, .get(fixture.at(fixture.customization + "/events", 1)).bearer(token)),
                 try SSEClient(port: port, .get(fixture.at(fixture.customization + "/events", 2)).bearer(token)))
            }
            #expect(try await offPool { phone.nextEvent(timeout: 30)?.id } == "0.1")
            #expect(try await offPool { ipad.nextEvent(timeout: 30)?.id } == "0.2")
            #expect(try await live.send(.patch(fixture.at(fixture.customization, 1)).bearer(token).json(Self.patch(Self.hide("bell")))).status == 200)
            let phoneEvent = try #require(try await offPool { phone.nextEvent(timeout: 30) })
            let ipadEvent = try #require(try await offPool { ipad.nextEvent(timeout: 30) })
            #expect(phoneEvent.id == "1.1" && phoneEvent.data?.contains("com.myApp.bell") == true)
            #expect(ipadEvent.id == "1.2" && ipadEvent.data?.contains("com.myApp.bell") == false && ipadEvent.data?.contains(#""schemaVersion":2"#) == true)
            // A long poll under v1 with the v1 ETag is answered under v1 once the iPad writes (registered or not when
            // the write commits: either way the answer is the new revision as v1 sees it).
            async let polled = live.send(.get(fixture.at(fixture.customization, 1, "waitSeconds=30")).bearer(token).ifNoneMatch("\"1.1\""))
            #expect(try await live.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("garden")))).status == 200)
            let answer = try await polled
            #expect(answer.status == 200 && answer.etag == "\"2.1\"" && !answer.text.contains("com.myApp.garden"))
            #expect(try await offPool { phone.nextEvent(timeout: 30)?.id } == "2.1")
            // Raising the minimum: the v1 stream gets schema-version-retired and ends; the v2 one stays.
            #expect(try await live.send(.patch("/v1/apps/com.myApp").bearer(live.admin).json(#"{"minimumSchemaVersion": 2}"#)).status == 200)
            let retired = try await offPool { () -> Bool in
                for _ in 0..<5 {
                    if let block = phone.nextEvent(timeout: 10), block.event == "schema-version-retired" { return phone.endsWithin(30) }
                }
                return false
            }
            #expect(retired)
            let again = try await offPool { try SSEClient(port: port, .get(fixture.at(fixture.customization + "/events", 1)).bearer(token)) }
            #expect(again.status == 410)
            #expect(try await live.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("news")))).status == 200)
            let last = try await offPool { () -> [String] in
                var ids: [String] = []
                while ids.last != "3.2", let event = ipad.nextEvent(timeout: 30) { ids.append(event.id ?? event.event ?? "?") }
                return ids
            }
            #expect(last.last == "3.2", "\(last)")
        }
    }
}
