import Foundation
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

/// Issue 12: conditional requests and caching (RFC 9110 / 9111), authentication challenges, methods.
extension APITests {
    static let withBell = Seeds.behaviorAllAutomatic
    /// `withBell` plus one tab.
    static let withBellAndNews = Seeds.behaviorAllAutomatic.replacingOccurrences(
        of: #"{"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},"#,
        with: #"{"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"}, {"kind": "tab", "id": "com.myApp.news", "title": "News", "systemImage": "newspaper"},"#)

    @Test("an app deleted and created again never reuses a schema version, so no old ETag or cached version names new content")
    func recreatedAppNeverReusesTags() async throws {
        try await withLiveService { live in
            let oldSecret = try await live.makeApp("app", schema: Self.withBell)
            let path = "/v1/apps/app/users/u/customization"
            let hide = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#
            let old = try await live.call("PATCH", path, token: live.userToken(app: "app", user: "u", secret: oldSecret), json: hide)
            #expect(old.headers["ETag"] == "\"1.1\"")
            let oldSchema = try await live.call("GET", "/v1/apps/app/schema/versions/1", token: live.admin)
            #expect(oldSchema.headers["ETag"] == "\"v1\"")

            #expect(try await live.call("DELETE", "/v1/apps/app", token: live.admin).status == 204)
            let created = try await live.call("POST", "/v1/apps", token: live.admin, json: #"{"id": "app", "name": "Again"}"#)
            #expect(created.status == 201)
            #expect(created.field("schemaVersion") == .integer(0))
            let dryRun = try await live.call("PUT", "/v1/apps/app/schema?dryRun=true", token: live.admin, json: Self.withBellAndNews)
            #expect(dryRun.field("wouldCreateVersion") == .integer(2))
            let registered = try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: Self.withBellAndNews)
            #expect(registered.status == 201)
            #expect(registered.field("version") == .integer(2), "version 1 named the deleted app's schema")
            #expect(try await live.call("GET", "/v1/apps/app/schema/versions/1", token: live.admin).status == 404)
            guard case .string(let newSecret)? = created.field("signingSecret") else { Issue.record("no secret"); return }
            let token = live.userToken(app: "app", user: "u", secret: newSecret)
            let fresh = try await live.call("GET", path, token: token, headers: [("If-None-Match", "\"1.1\"")])
            #expect(fresh.status == 200)
            #expect(fresh.headers["ETag"] == "\"0.2\"")
            let again = try await live.call("PATCH", path, token: token, json: hide)
            #expect(again.headers["ETag"] == "\"1.2\"", "revision 1 again, but under a version the old app never had")
            #expect(try await live.call("GET", "/v1/apps/app/schema", token: live.admin, headers: [("If-None-Match", "\"v1\"")]).status == 200)
        }
    }

    @Test("for a user with none, GET and writes agree: the empty customization's tag matches, `*` does not")
    func emptyCustomizationPreconditions() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let path = "/v1/apps/app/users/u/customization"
            #expect(try await live.call("GET", path, token: token, headers: [("If-Match", "*")]).status == 412)
            #expect(try await live.call("GET", path, token: token, headers: [("If-Match", "\"0.1\"")]).status == 200)
            #expect(try await live.call("DELETE", path, token: token, headers: [("If-Match", "*")]).status == 412)
            #expect(try await live.call("DELETE", path, token: token, headers: [("If-Match", "\"0.1\"")]).status == 204)
        }
    }

    @Test("every answer says how it may be cached: operator reads, writes, 204s, preflights and the server's own refusals are no-store")
    func cacheControlEverywhere() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Self.withBell)
            let answers = [
                try await live.call("GET", "/v1/apps", token: live.admin),
                try await live.call("GET", "/v1/apps/app", token: live.admin),
                try await live.call("GET", "/v1/apps/app/stats", token: live.admin),
                try await live.call("PUT", "/v1/apps/app/schema?dryRun=true", token: live.admin, json: Self.withBell),
                try await live.call("OPTIONS", "/v1/apps", headers: [("Origin", "https://app.example"), ("Access-Control-Request-Method", "GET")]),
                try await live.call("DELETE", "/v1/apps/app/users/u/customization", token: live.admin),
            ]
            for answer in answers { #expect(answer.headers["Cache-Control"] == "no-store", "\(answer.status)") }
            let port = live.port
            let framing = try await offPool { () throws -> RawClient.Response? in
                let client = try RawClient(port: port)
                client.send("GARBAGE\r\n\r\n")
                return client.readResponse()
            }
            #expect(framing?.status == 400)
            #expect(framing?.headers["Cache-Control"] == "no-store")
        }
    }

    @Test("a first write that changes nothing stores nothing: revision 0 and its ETag stay")
    func noOpFirstWrite() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let path = "/v1/apps/app/users/u/customization"
            for (method, body) in [("PUT", "{}"), ("PATCH", #"{"operations": []}"#), ("PATCH", #"{"operations": [{"op": "resetTabBarOrder"}]}"#)] {
                let answer = try await live.call(method, path, token: token, json: body)
                #expect(answer.status == 200, "\(method) \(body)")
                #expect(answer.field("revision") == .integer(0), "\(method) \(body)")
                #expect(answer.headers["ETag"] == "\"0.1\"", "\(method) \(body)")
            }
            #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", "\"0.1\"")]).status == 304)
        }
    }

    @Test("a schema change changes every ETag: no 304 for the old layout, 412 for If-Match with the old tag, same revision")
    func schemaChangeChangesETags() async throws {
        #expect(Self.withBellAndNews != Self.withBell)
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let base = "/v1/apps/app/users/u"
            let oldLayout = try await live.call("GET", base + "/layout?sizeClass=regular", token: token)
            #expect(oldLayout.headers["ETag"] == "\"0.1.regular\"")
            #expect(try await live.call("GET", base + "/layout?sizeClass=compact", token: token).headers["ETag"] == "\"0.1.compact\"")
            let oldCustomization = try await live.call("GET", base + "/customization", token: token)
            #expect(oldCustomization.headers["ETag"] == "\"0.1\"")
            #expect(try await live.call("GET", base + "/layout?sizeClass=regular", token: token, headers: [("If-None-Match", "\"0.1.regular\"")]).status == 304)

            #expect(try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: Self.withBellAndNews).status == 201)
            let newLayout = try await live.call("GET", base + "/layout?sizeClass=regular", token: token, headers: [("If-None-Match", "\"0.1.regular\"")])
            #expect(newLayout.status == 200)
            #expect(newLayout.headers["ETag"] == "\"0.2.regular\"")
            #expect(newLayout.ids("sidebar").contains("com.myApp.news"))
            let newCustomization = try await live.call("GET", base + "/customization", token: token, headers: [("If-None-Match", "\"0.1\"")])
            #expect(newCustomization.status == 200)
            #expect(newCustomization.headers["ETag"] == "\"0.2\"")
            #expect(newCustomization.field("revision") == .integer(0))

            // The revision is still 0, but the tag names the representation before the schema change.
            let patch = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.news", "visibility": "hidden"}]}"#
            let stale = try await live.call("PATCH", base + "/customization", token: token, headers: [("If-Match", "\"0.1\"")], json: patch)
            #expect(stale.status == 412)
            #expect(stale.headers["ETag"] == "\"0.2\"")
            #expect(stale.headers["Content-Type"] == "application/problem+json")
            #expect(try await live.call("PATCH", base + "/customization", token: token, headers: [("If-Match", "\"0.1.regular\"")], json: patch).status == 412)

            // A stored customization (revision 1) across a second schema change.
            let written = try await live.call("PATCH", base + "/customization", token: token, json: patch)
            #expect(written.headers["ETag"] == "\"1.2\"")
            #expect(try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: Self.withBell).status == 201)
            let reconciled = try await live.call("GET", base + "/customization", token: token, headers: [("If-None-Match", "\"1.2\"")])
            #expect(reconciled.status == 200)
            #expect(reconciled.headers["ETag"] == "\"1.3\"")
            #expect(try await live.call("GET", base + "/customization", token: token, headers: [("If-None-Match", "\"1.3\"")]).status == 304)
            for method in ["PUT", "PATCH", "DELETE"] {
                let body: String? = method == "PUT" ? "{}" : method == "PATCH" ? #"{"operations": []}"# : nil
                let answer = try await live.call(method, base + "/customization", token: token, headers: [("If-Match", "\"1.2\"")], json: body)
                #expect(answer.status == 412, "\(method)")
                #expect(answer.headers["ETag"] == "\"1.3\"", "\(method)")
            }
            // A `revision` in a PUT body still works as before (the revision alone, whatever the schema version).
            #expect(try await live.call("PUT", base + "/customization", token: token, json: #"{"revision": 0}"#).status == 412)
            let put = try await live.call("PUT", base + "/customization", token: token, headers: [("If-Match", "\"1.3\"")], json: #"{"revision": 1}"#)
            #expect(put.status == 200)
            #expect(put.headers["ETag"] == "\"2.3\"")
        }
    }

    /// A route that sends an ETag, and how to read it now.
    private struct Tagged {
        let name: String
        let fetch: @Sendable () async throws -> RawClient.Response
    }

    @Test("an ETag never names two contents: every route sending one, fetched across content changes, has tags that differ iff bodies differ")
    func etagNamesOneContent() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let base = "/v1/apps/app/users/u"
            let routes: [Tagged] = [
                Tagged(name: "GET customization") { try await live.call("GET", base + "/customization", token: token) },
                // A no-op write answers with the current representation: the same tag as GET, the same bytes.
                Tagged(name: "PUT customization (same choices)") {
                    let current = try await live.call("GET", base + "/customization", token: token)
                    var object = JSONObject()
                    if case .object(let read) = try current.json() {
                        for key in ["tabs", "sections", "tabBarOrder"] { object[key] = read[key] }
                    }
                    return try await live.call("PUT", base + "/customization", token: token, json: JSONWriter.string(.object(object)))
                },
                Tagged(name: "PATCH customization (no operations)") {
                    try await live.call("PATCH", base + "/customization", token: token, json: #"{"operations": []}"#)
                },
                Tagged(name: "GET layout regular") { try await live.call("GET", base + "/layout?sizeClass=regular", token: token) },
                Tagged(name: "GET layout compact") { try await live.call("GET", base + "/layout?sizeClass=compact", token: token) },
                Tagged(name: "GET schema") { try await live.call("GET", "/v1/apps/app/schema", token: token) },
                Tagged(name: "GET schema version 1") { try await live.call("GET", "/v1/apps/app/schema/versions/1", token: token) },
                Tagged(name: "GET openapi.yaml") { try await live.call("GET", "/openapi.yaml") },
            ]
            let changes: [(String, @Sendable () async throws -> Int)] = [
                ("hide a tab", { try await live.call("PATCH", base + "/customization", token: token,
                                                     json: #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#).status }),
                ("nothing", { 200 }),
                ("register a schema that adds a tab", { try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: Self.withBellAndNews).status }),
                ("register a schema that removes it", { try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: Self.withBell).status }),
                ("delete the customization", { try await live.call("DELETE", base + "/customization", token: token).status }),
                ("reorder a section", { try await live.call("PATCH", base + "/customization", token: token,
                                                            json: #"{"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 0}]}"#).status }),
            ]
            // Every (tag, body) a route ever sent: one tag, one body, both ways.
            var seen: [String: [String: [UInt8]]] = [:]
            var before: [String: RawClient.Response] = [:]
            func record(_ route: Tagged, _ response: RawClient.Response, after change: String) {
                #expect(response.status == 200, "\(route.name) after \(change)")
                guard let tag = response.headers["ETag"] else {
                    Issue.record("\(route.name) sent no ETag")
                    return
                }
                #expect(!tag.hasPrefix("W/"), "\(route.name): a strong tag")
                if let body = seen[route.name, default: [:]][tag] {
                    #expect(body == response.body, "\(route.name): \(tag) named two contents (after \(change))")
                }
                seen[route.name, default: [:]][tag] = response.body
                if let previous = before[route.name] {
                    #expect((previous.headers["ETag"] == tag) == (previous.body == response.body),
                            "\(route.name) across \(change): \(previous.headers["ETag"] ?? "-") → \(tag)")
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

    @Test("the schema's ETag \"v<version>\" is honoured: If-None-Match 304 on schema and schema versions, If-Match 412")
    func schemaConditionalRequests() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let current = try await live.call("GET", "/v1/apps/app/schema", token: token)
            #expect(current.headers["ETag"] == "\"v1\"")
            for value in ["\"v1\"", "W/\"v1\"", "\"v0\", \"v1\"", "*"] {
                let answer = try await live.call("GET", "/v1/apps/app/schema", token: token, headers: [("If-None-Match", value)])
                #expect(answer.status == 304, "\(value)")
                #expect(answer.headers["ETag"] == "\"v1\"", "\(value)")
                #expect(answer.headers["Cache-Control"] == "private, no-cache", "\(value)")
                #expect(answer.body.isEmpty)
            }
            #expect(try await live.call("GET", "/v1/apps/app/schema", token: token, headers: [("If-None-Match", "\"v0\"")]).status == 200)
            #expect(try await live.call("GET", "/v1/apps/app/schema", token: token, headers: [("If-Match", "\"v1\"")]).status == 200)
            let wrong = try await live.call("GET", "/v1/apps/app/schema", token: token, headers: [("If-Match", "\"v2\"")])
            #expect(wrong.status == 412)
            #expect(wrong.headers["ETag"] == "\"v1\"")
            let version = try await live.call("GET", "/v1/apps/app/schema/versions/1", token: token, headers: [("If-None-Match", "\"v1\"")])
            #expect(version.status == 304)
            #expect(version.headers["Cache-Control"] == "private, max-age=86400, immutable")
            #expect(try await live.call("GET", "/v1/apps/app/schema", token: token, headers: [("If-None-Match", "v1")]).status == 400)

            #expect(try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: Self.withBellAndNews).status == 201)
            let changed = try await live.call("GET", "/v1/apps/app/schema", token: token, headers: [("If-None-Match", "\"v1\"")])
            #expect(changed.status == 200)
            #expect(changed.headers["ETag"] == "\"v2\"")
            #expect(try await live.call("GET", "/v1/apps/app/schema/versions/1", token: token, headers: [("If-None-Match", "\"v1\"")]).status == 304)
            #expect(try await live.call("GET", "/v1/apps/app/schema/versions/2", token: token, headers: [("If-None-Match", "\"v1\"")]).status == 200)
        }
    }

    @Test("If-Match: lists, strong comparison, *, malformed 400; If-None-Match: weak, * on writes; If-Match on GET")
    func preconditionSyntaxAndSemantics() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            let path = "/v1/apps/app/users/u/customization"
            let hide = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}"#
            let show = #"{"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "automatic"}]}"#
            // A user with none: If-Match * has nothing to match; If-None-Match * lets the first write through, once.
            #expect(try await live.call("PATCH", path, token: token, headers: [("If-Match", "*")], json: hide).status == 412)
            let first = try await live.call("PATCH", path, token: token, headers: [("If-None-Match", "*")], json: hide)
            #expect(first.status == 200)
            #expect(first.headers["ETag"] == "\"1.1\"")
            let again = try await live.call("PUT", path, token: token, headers: [("If-None-Match", "*")], json: "{}")
            #expect(again.status == 412)
            #expect(again.headers["ETag"] == "\"1.1\"")
            #expect(try await live.call("DELETE", path, token: token, headers: [("If-None-Match", "*")]).status == 412)
            // If-None-Match with the current tag on a write is 412 too (weakly compared).
            #expect(try await live.call("PATCH", path, token: token, headers: [("If-None-Match", "W/\"1.1\"")], json: show).status == 412)

            // Strong comparison: a weak tag never matches; a list containing the current tag matches.
            let weak = try await live.call("PATCH", path, token: token, headers: [("If-Match", "W/\"1.1\"")], json: show)
            #expect(weak.status == 412)
            #expect(weak.headers["ETag"] == "\"1.1\"")
            let listed = try await live.call("PATCH", path, token: token, headers: [("If-Match", "\"0.1\", \"1.1\"")], json: show)
            #expect(listed.status == 200)
            #expect(listed.headers["ETag"] == "\"2.1\"")
            let split = try await live.call("PATCH", path, token: token, headers: [("If-Match", "\"1.1\""), ("If-Match", "\"2.1\"")], json: hide)
            #expect(split.status == 200, "a list over two field lines")
            #expect(try await live.call("PATCH", path, token: token, headers: [("If-Match", "*")], json: show).status == 200)

            for malformed in ["4.1", "\"4.1", "W/4.1", "\"4.1\" \"3.1\"", "*, \"4.1\"", "'4.1'"] {
                let answer = try await live.call("PATCH", path, token: token, headers: [("If-Match", malformed)], json: show)
                #expect(answer.status == 400, "\(malformed)")
                #expect(answer.field("type") == .string("urn:tabstore:problem:invalid-if-match"), "\(malformed)")
                let read = try await live.call("GET", path, token: token, headers: [("If-Match", malformed)])
                #expect(read.status == 400, "GET \(malformed)")
            }
            let badNone = try await live.call("GET", path, token: token, headers: [("If-None-Match", "4.1")])
            #expect(badNone.status == 400)
            #expect(badNone.field("type") == .string("urn:tabstore:problem:invalid-if-none-match"))
            #expect(try await live.call("GET", path, token: token).field("revision") == .integer(4), "nothing malformed was applied")
            // An empty list is grammatical (RFC 9110 §5.6.1) and names nothing: If-None-Match passes, If-Match fails.
            for empty in ["", " , "] {
                #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", empty)]).status == 200, "If-None-Match '\(empty)'")
                #expect(try await live.call("PATCH", path, token: token, headers: [("If-Match", empty)], json: show).status == 412, "If-Match '\(empty)'")
            }

            // GET: If-None-Match compares weakly; If-Match is evaluated (strongly) too, and first.
            #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", "W/\"4.1\"")]).status == 304)
            #expect(try await live.call("GET", path, token: token, headers: [("If-None-Match", "\"3.1\", W/\"4.1\"")]).status == 304)
            #expect(try await live.call("GET", path, token: token, headers: [("If-Match", "\"4.1\"")]).status == 200)
            let mismatched = try await live.call("GET", path, token: token, headers: [("If-Match", "\"3.1\"")])
            #expect(mismatched.status == 412)
            #expect(mismatched.headers["ETag"] == "\"4.1\"")
            #expect(try await live.call("GET", path, token: token, headers: [("If-Match", "\"3.1\""), ("If-None-Match", "\"4.1\"")]).status == 412)
            let layout = "/v1/apps/app/users/u/layout?sizeClass=compact"
            #expect(try await live.call("GET", layout, token: token, headers: [("If-Match", "\"4.1\"")]).status == 412, "a customization tag is not a layout's")
            #expect(try await live.call("GET", layout, token: token, headers: [("If-Match", "\"4.1.compact\"")]).status == 200)
            #expect(try await live.call("GET", layout, token: token, headers: [("If-None-Match", "\"4.1.regular\"")]).status == 200)
        }
    }

    @Test("caching: Vary: Origin whenever CORS is on, no-store on probes and metrics, a strong ETag on /openapi.yaml")
    func cachingHeaders() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let token = live.userToken(app: "app", user: "u", secret: secret)
            for (path, bearer) in [("/v1/apps/app/users/u/customization", token), ("/v1/apps/app/users/u/layout?sizeClass=regular", token),
                                   ("/v1/apps/app/schema", token), ("/v1/apps/app/schema/versions/1", token), ("/openapi.yaml", nil),
                                   ("/v1/apps", live.admin)] as [(String, String?)] {
                let plain = try await live.call("GET", path, token: bearer)
                #expect(plain.status == 200, "\(path)")
                #expect(plain.headers.tokens("Vary").contains("origin"), "\(path) without Origin")
                #expect(plain.headers["Access-Control-Allow-Origin"] == nil, "\(path)")
                let browser = try await live.call("GET", path, token: bearer, headers: [("Origin", "https://app.example")])
                #expect(browser.headers.tokens("Vary").contains("origin"), "\(path) with Origin")
                #expect(browser.headers["Access-Control-Allow-Origin"] == "https://app.example", "\(path)")
                if let tag = plain.headers["ETag"] {
                    let notModified = try await live.call("GET", path, token: bearer, headers: [("If-None-Match", tag)])
                    #expect(notModified.status == 304, "\(path)")
                    #expect(notModified.headers.tokens("Vary").contains("origin"), "\(path) 304")
                }
            }
            for path in ["/healthz", "/readyz", "/metrics"] {
                let probe = try await live.call("GET", path)
                #expect(probe.status == 200, "\(path)")
                #expect(probe.headers["Cache-Control"] == "no-store", "\(path)")
            }
            let spec = try await live.call("GET", "/openapi.yaml")
            let tag = try #require(spec.headers["ETag"])
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 34, "strong, 128 bits of hex: \(tag)")
            let hex = Crypto.sha256(Array(OpenAPIDocument.yaml.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
            #expect(tag == "\"\(hex)\"")
            let cached = try await live.call("GET", "/openapi.yaml", headers: [("If-None-Match", tag)])
            #expect(cached.status == 304)
            #expect(cached.headers["ETag"] == tag)
            #expect(cached.body.isEmpty)
            #expect(try await live.call("GET", "/openapi.yaml", headers: [("If-None-Match", "\"other\"")]).status == 200)
        }

        // Without CORS nothing varies by Origin.
        let harness = try InProcessAPI()
        #expect(await harness.call("GET", "/healthz", token: nil).headers["Vary"] == nil)
        await harness.close()
    }

    @Test("401 challenges (RFC 6750 §3.1): no error without credentials, invalid_token with bad ones; not-a-JWT is told so plainly")
    func bearerChallenges() async throws {
        try await withLiveService { live in
            let secret = try await live.makeApp("app", schema: Self.withBell)
            let path = "/v1/apps/app/users/u/customization"
            for headers in [[], [("Authorization", "Basic dTpw")], [("Authorization", "Bearer ")]] as [[(String, String)]] {
                let answer = try await live.call("GET", path, headers: headers)
                #expect(answer.status == 401, "\(headers)")
                #expect(answer.headers["WWW-Authenticate"] == #"Bearer realm="tabstore""#, "\(headers)")
            }
            let forged = live.userToken(app: "app", user: "u", secret: secret + "x")
            for token in [forged, "wrong-admin-token", "a.b", "a.b.c.d"] {
                let answer = try await live.call("GET", path, token: token)
                #expect(answer.status == 401, "\(token)")
                #expect(answer.headers["WWW-Authenticate"] == #"Bearer realm="tabstore", error="invalid_token""#, "\(token)")
            }
            for token in ["wrong-admin-token", "test-admin-token-0123456789-typo", "a.b", "a.b.c.d", "..."] {
                let answer = try await live.call("GET", "/v1/apps", token: token)
                #expect(answer.status == 401, "\(token)")
                #expect(answer.field("detail") == .string("invalid token"), "\(token)")
                #expect(!answer.text.contains("three"), "\(token)")
            }
        }
    }

    @Test("a JWT whose aud is an array holding the path's app is accepted, verified with that app's secret, cached per app")
    func audienceArrays() async throws {
        try await withLiveService { live in
            let one = try await live.makeApp("app.one", schema: Self.withBell)
            let two = try await live.makeApp("app.two", schema: Self.withBell)
            let exp = Trust.now() + 600
            let path = { (app: String) in "/v1/apps/\(app)/users/alice/customization" }
            let forOne = Trust.jwt(payload: #"{"sub":"alice","aud":["app.two","app.one"],"exp":\#(exp)}"#, secret: one)
            let forTwo = Trust.jwt(payload: #"{"sub":"alice","aud":["app.two","app.one"],"exp":\#(exp)}"#, secret: two)
            let elsewhere = Trust.jwt(payload: #"{"sub":"alice","aud":["app.three","app.four"],"exp":\#(exp)}"#, secret: one)
            let reference = try await live.call("GET", path("app.one"), token: live.userToken(app: "app.one", user: "alice", secret: "forged"))
            #expect(reference.status == 401)
            // Twice each, in alternation: a cached verification for one app never answers for the other.
            for _ in 0..<2 {
                #expect(try await live.call("GET", path("app.one"), token: forOne).status == 200)
                #expect(try await live.call("GET", path("app.two"), token: forTwo).status == 200)
                for (token, app) in [(forOne, "app.two"), (forTwo, "app.one"), (elsewhere, "app.one")] {
                    let refused = try await live.call("GET", path(app), token: token)
                    #expect(refused.status == 401, "\(app)")
                    #expect(refused.body == reference.body, "\(app): same answer as a forged token")
                    #expect(refused.headers["WWW-Authenticate"] == reference.headers["WWW-Authenticate"])
                }
            }
            #expect(try await live.call("GET", "/v1/apps/app.one/users/bob/customization", token: forOne).status == 403)
            #expect(try await live.call("GET", "/v1/apps/app.one/schema", token: forOne).status == 200)
            // Routes without {appId} refuse user tokens anyway.
            #expect([401, 403].contains(try await live.call("GET", "/v1/apps", token: forOne).status))
            // Rotating app.one's secret retires the cached verification.
            #expect(try await live.call("POST", "/v1/apps/app.one/signing-secret", token: live.admin).status == 200)
            #expect(try await live.call("GET", path("app.one"), token: forOne).status == 401)
            #expect(try await live.call("GET", path("app.two"), token: forTwo).status == 200)
        }
    }

    @Test("unknown methods: 501 (also from admit, before the body), labelled other; known methods a path lacks: 405 with Allow")
    func unknownMethods() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Self.withBell)
            for (method, path) in [("BREW", "/healthz"), ("PROPFIND", "/v1/apps"), ("TRACE", "/v1/apps/app/users/u/customization"), ("FOO", "/nowhere")] {
                let answer = try await live.call(method, path, token: live.admin)
                #expect(answer.status == 501, "\(method) \(path)")
                #expect(answer.headers["Content-Type"] == "application/problem+json", "\(method)")
                #expect(answer.field("type") == .string("urn:tabstore:problem:not-implemented"), "\(method)")
            }
            let head = InProcessAPI.head("MKCOL", "/v1/apps/app/schema", token: nil, contentLength: 50_000_000, expectsContinue: true)
            #expect(live.service.api.admit(head, context: InProcessAPI.context)?.status == 501)
            let metrics = try await live.call("GET", "/metrics")
            #expect(metrics.text.contains(#"method="other",status="501"} "#))
            #expect(!metrics.text.contains("BREW") && !metrics.text.contains("PROPFIND"))
            for (method, path, allow) in [("PUT", "/healthz", "GET"), ("PATCH", "/v1/apps", "POST"), ("POST", "/v1/apps/app/schema", "PUT")] {
                let answer = try await live.call(method, path, token: live.admin, json: "{}")
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(answer.headers["Allow"]?.contains(allow) == true, "\(method) \(path)")
            }
        }
    }

    @Test("PUT schema type-checks the server-owned fields it ignores (version, createdAt)")
    func schemaEchoFieldsTypeChecked() async throws {
        try await withLiveService { live in
            _ = try await live.makeApp("app", schema: Self.withBell)
            let items = Self.withBell.dropFirst().dropLast()  // the members after "{" and before "}"
            for (extra, status) in [(#""version": "abc","#, 400), (#""createdAt": 5,"#, 400), (#""version": 1.5,"#, 400), (#""createdAt": {},"#, 400),
                                    (#""version": 7, "createdAt": "2020-01-01T00:00:00Z","#, 200), (#""version": null,"#, 200)] {
                let body = "{" + extra + items + "}"
                let answer = try await live.call("PUT", "/v1/apps/app/schema", token: live.admin, json: body)
                #expect(answer.status == status, "\(extra) \(answer.text)")
                if status == 400 { #expect(answer.field("type") == .string("urn:tabstore:problem:malformed-request")) }
            }
            #expect(try await live.call("GET", "/v1/apps/app/schema", token: live.admin).field("version") == .integer(1))
        }
    }
}
