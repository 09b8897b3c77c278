import Foundation
import Testing
@testable import TabStoreSupport
import TabStoreTestSupport

/// Issue 12: an ETag names one content, across schema changes and app re-creation (RFC 9110 §8.8.3).
extension APITests {
    static let withBell = Seeds.behaviorAllAutomatic
    /// `withBell` plus one tab.
    static let withBellAndNews = Seeds.behaviorAllAutomatic.replacingOccurrences(
        of: #"{"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},"#,
        with:
            #"{"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"}, {"kind": "tab", "id": "com.myApp.news", "title": "News", "systemImage": "newspaper"},"#
    )
    static let hideNews = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.news", "visibility": "hidden"}]}"#

    @Test("an app deleted and created again never reuses a schema version, so no old ETag or cached version names new content")
    func recreatedAppNeverReusesTags() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let old = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Self.hideBellOperation))
            #expect(old.etag == "\"1.1\"")
            let oldSchema = try await live.send(.get("/v1/apps/app.one/schema/versions/1").bearer(live.admin))
            #expect(oldSchema.etag == "\"v1\"")

            #expect(try await live.send(.delete("/v1/apps/app.one").bearer(live.admin)).status == 204)
            let created = try await live.send(.post("/v1/apps").bearer(live.admin).json(#"{"id": "app.one", "name": "Again"}"#))
            #expect(created.status == 201)
            #expect(created.field("schemaVersion") == .integer(0))
            let dryRun = try await live.send(.put("/v1/apps/app.one/schema?dryRun=true").bearer(live.admin).json(Self.withBellAndNews))
            #expect(dryRun.field("wouldCreateVersion") == .integer(2))
            let registered = try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBellAndNews))
            #expect(registered.status == 201)
            #expect(registered.field("version") == .integer(2), "version 1 named the deleted app's schema")
            #expect(try await live.send(.get("/v1/apps/app.one/schema/versions/1").bearer(live.admin)).status == 404)
            guard case .string(let newSecret)? = created.field("signingSecret") else { Issue.record("no secret"); return }
            let token = Credentials.App(id: "app.one", secret: newSecret).token(for: Credentials.user)
            let fresh = try await live.send(.get(creds.customization).bearer(token).ifNoneMatch("\"1.1\""))
            #expect(fresh.status == 200)
            #expect(fresh.etag == "\"0.2\"")
            let again = try await live.send(.patch(creds.customization).bearer(token).json(Self.hideBellOperation))
            #expect(again.etag == "\"1.2\"", "revision 1 again, but under a version the old app never had")
            #expect(try await live.send(.get("/v1/apps/app.one/schema").bearer(live.admin).ifNoneMatch("\"v1\"")).status == 200)
        }
    }

    // MARK: Schema changes

    @Test("a schema change changes every ETag of a user with none: no 304 for the old layout or customization, same revision")
    func schemaChangeChangesReadTags() async throws {
        #expect(Self.withBellAndNews != Self.withBell)
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let get = { (path: String) in TestRequest.get(path).bearer(creds.userToken) }
            #expect(try await live.send(get(creds.layout("regular"))).etag == "\"0.1.regular\"")
            #expect(try await live.send(get(creds.layout("compact"))).etag == "\"0.1.compact\"")
            #expect(try await live.send(get(creds.customization)).etag == "\"0.1\"")
            #expect(try await live.send(get(creds.layout("regular")).ifNoneMatch("\"0.1.regular\"")).status == 304)

            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBellAndNews)).status == 201)
            let newLayout = try await live.send(get(creds.layout("regular")).ifNoneMatch("\"0.1.regular\""))
            #expect(newLayout.status == 200)
            #expect(newLayout.etag == "\"0.2.regular\"")
            #expect(newLayout.ids("sidebar").contains("com.myApp.news"))
            let newCustomization = try await live.send(get(creds.customization).ifNoneMatch("\"0.1\""))
            #expect(newCustomization.status == 200)
            #expect(newCustomization.etag == "\"0.2\"")
            #expect(newCustomization.field("revision") == .integer(0))
        }
    }

    @Test("after a schema change, a write with the old tag is 412 although the revision is the same")
    func schemaChangeFailsOldIfMatch() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBellAndNews)).status == 201)
            // The revision is still 0, but the tag names the representation before the schema change.
            let patch = TestRequest.patch(creds.customization).bearer(creds.userToken).json(Self.hideNews)
            let stale = try await live.send(patch.ifMatch("\"0.1\""))
            #expect(stale.status == 412)
            #expect(stale.etag == "\"0.2\"")
            #expect(stale.header("Content-Type") == "application/problem+json")
            #expect(try await live.send(patch.ifMatch("\"0.1.regular\"")).status == 412)
        }
    }

    /// `alice` with a stored customization (revision 1, written under schema version 2), then schema version 3.
    static func storedAcrossSchemaChange(_ live: LiveService) async throws -> Credentials {
        let creds = try await Credentials.register(on: live, schema: Self.withBell)
        #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBellAndNews)).status == 201)
        let written = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Self.hideNews))
        #expect(written.etag == "\"1.2\"")
        #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(Self.withBell)).status == 201)
        return creds
    }

    @Test("a stored customization across a schema change: its tag follows the version, writes with the old tag are 412")
    func schemaChangeRetagsStoredCustomization() async throws {
        try await withLiveService { live in
            let creds = try await Self.storedAcrossSchemaChange(live)
            let get = TestRequest.get(creds.customization).bearer(creds.userToken)
            let reconciled = try await live.send(get.ifNoneMatch("\"1.2\""))
            #expect(reconciled.status == 200)
            #expect(reconciled.etag == "\"1.3\"")
            #expect(try await live.send(get.ifNoneMatch("\"1.3\"")).status == 304)
            for method in ["PUT", "PATCH", "DELETE"] {
                let body: String? = method == "PUT" ? "{}" : method == "PATCH" ? #"{"operations": []}"# : nil
                let answer = try await live.send(.method(method, creds.customization).bearer(creds.userToken).ifMatch("\"1.2\"").json(ifAny: body))
                #expect(answer.status == 412, "\(method)")
                #expect(answer.etag == "\"1.3\"", "\(method)")
            }
        }
    }

    @Test("a `revision` in a PUT body is compared alone, whatever the schema version")
    func bodyRevisionIgnoresSchemaVersion() async throws {
        try await withLiveService { live in
            let creds = try await Self.storedAcrossSchemaChange(live)
            #expect(try await live.send(.put(creds.customization).bearer(creds.userToken).json(#"{"revision": 0}"#)).status == 412)
            let put = try await live.send(.put(creds.customization).bearer(creds.userToken).ifMatch("\"1.3\"").json(#"{"revision": 1}"#))
            #expect(put.status == 200)
            // Version 3 sees no choices, and the hidden News stays stored for version 2's clients (still supported):
            // the PUT changes nothing, so nothing is stored and the revision stays (docs/domain.md "Several app versions at once").
            #expect(put.etag == "\"1.3\"")
            #expect(try await live.send(.get(creds.customization + "?schemaVersion=2").bearer(creds.userToken)).text.contains("hidden"))
        }
    }

    /// A route that sends an ETag, and how to read it now.
    private struct Tagged {
        let name: String
        let fetch: @Sendable () async throws -> TestResponse
    }

    @Test("an ETag never names two contents: every route sending one, fetched across content changes, has tags that differ iff bodies differ")
    func etagNamesOneContent() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Self.withBell)
            let token = creds.userToken
            let routes: [Tagged] = [
                Tagged(name: "GET customization") { try await live.send(.get(creds.customization).bearer(token)) },
                // A no-op write answers with the current representation: the same tag as GET, the same bytes.
                Tagged(name: "PUT customization (same choices)") {
                    let current = try await live.send(.get(creds.customization).bearer(token))
                    var object = JSONObject()
                    if case .object(let read) = try current.json() {
                        for key in ["tabs", "sections", "tabBarOrder"] { object[key] = read[key] }
                    }
                    return try await live.send(.put(creds.customization).bearer(token).json(.object(object)))
                },
                Tagged(name: "PATCH customization (no operations)") {
                    try await live.send(.patch(creds.customization).bearer(token).json(#"{"operations": []}"#))
                },
                Tagged(name: "GET layout regular") { try await live.send(.get(creds.layout("regular")).bearer(token)) },
                Tagged(name: "GET layout compact") { try await live.send(.get(creds.layout("compact")).bearer(token)) },
                Tagged(name: "GET schema") { try await live.send(.get("/v1/apps/app.one/schema").bearer(token)) },
                Tagged(name: "GET schema version 1") { try await live.send(.get("/v1/apps/app.one/schema/versions/1").bearer(token)) },
                Tagged(name: "GET openapi.yaml") { try await live.send(.get("/openapi.yaml")) },
            ]
            let schema = TestRequest.put("/v1/apps/app.one/schema").bearer(live.admin)
            let changes: [(String, @Sendable () async throws -> Int)] = [
                ("hide a tab", { try await live.send(.patch(creds.customization).bearer(token).json(Self.hideBellOperation)).status }),
                ("nothing", { 200 }),
                ("register a schema that adds a tab", { try await live.send(schema.json(Self.withBellAndNews)).status }),
                ("register a schema that removes it", { try await live.send(schema.json(Self.withBell)).status }),
                ("delete the customization", { try await live.send(.delete(creds.customization).bearer(token)).status }),
                ("reorder a section", { try await live.send(.patch(creds.customization).bearer(token).json(
                    #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 0}]}"#)).status }),
            ]
            // Every (tag, body) a route ever sent: one tag, one body, both ways.
            var seen: [String: [String: [UInt8]]] = [:]
            var before: [String: TestResponse] = [:]
            func record(_ route: Tagged, _ response: TestResponse, after change: String) {
                #expect(response.status == 200, "\(route.name) after \(change)")
                guard let tag = response.etag else {
                    Issue.record("\(route.name) sent no ETag")
                    return
                }
                #expect(!tag.hasPrefix("W/"), "\(route.name): a strong tag")
                if let body = seen[route.name, default: [:]][tag] {
                    #expect(body == response.body, "\(route.name): \(tag) named two contents (after \(change))")
                }
                seen[route.name, default: [:]][tag] = response.body
                if let previous = before[route.name] {
                    #expect(
                        (previous.etag == tag) == (previous.body == response.body), "\(route.name) across \(change): \(previous.etag ?? "-") → \(tag)"
                    )
                }
                before[route.name] = response
            }
            for route in routes { record(route, try await route.fetch(), after: "start") }
            for (change, apply) in changes {
                #expect((200...204).contains(try await apply()), "\(change)")
                for route in routes { record(route, try await route.fetch(), after: change) }
            }
            // The customization and the layouts did change along the way; the schema version resource never did.
            #expect(seen["GET customization"]?.count == 6)
            #expect(seen["GET layout regular"]?.count == 6)
            #expect(seen["GET schema"]?.count == 3)
            #expect(seen["GET schema version 1"]?.count == 1)
            #expect(seen["GET openapi.yaml"]?.count == 1)
            // And one tag per content across routes with distinct shapes: the two layouts never share a tag.
            #expect(Set(seen["GET layout regular"]!.keys).isDisjoint(with: seen["GET layout compact"]!.keys))
        }
    }
}
