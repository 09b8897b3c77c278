import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreSupport
import TabStoreTestSupport

/// What an attack on the v1.2 operator endpoints found, each held here: the token cap under concurrent
/// creations, strict RFC 3339 expiries, refused operator writes in the audit log, a prefix that does not
/// decode, a history page of exactly `limit`, a misspelled `dryRun`, an empty schema.
@Suite("Operators at their edges: the token cap, strict times, audits of refusals and creations, list parameters", .serialized)
struct OperatorEdgeCaseTests {
    typealias V = AppVersionsTests

    @Test("concurrent creations never pass 100 operator tokens, and every token stored is listed", arguments: PostgresTestCluster.backends)
    func tokenCapUnderConcurrency(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            for index in 0..<95 {
                let made = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "fill-\#(index)", "scope": "read"}"#))
                #expect(made.status == 201)
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask { try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "race-\#(index)", "scope": "admin"}"#)).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 5 && statuses.filter { $0 == 409 }.count == 15, "\(statuses.sorted())")
            let list = try await live.send(.get("/v1/operator-tokens").bearer(live.admin))
            guard case .array(let items)? = list.field("items") else { Issue.record("no list: \(list.text)"); return }
            #expect(items.count == 100)
        }
    }

    @Test("Timestamp.parse: RFC 3339 date-times only, every field in range")
    func strictTimestamps() {
        #expect(Timestamp.parse("1970-01-01T00:00:00Z") == 0)
        #expect(Timestamp.parse("2030-01-01T00:00:00Z") == 1_893_456_000)
        #expect(Timestamp.parse("2030-01-01T00:00:00+02:00") == 1_893_456_000 - 7_200)
        #expect(Timestamp.parse("2029-12-31T19:00:00-05:00") == 1_893_456_000)
        #expect(Timestamp.parse("2030-01-01t00:00:00.5z") == 1_893_456_000)
        #expect(Timestamp.parse("2028-02-29T12:00:00Z") == 1_835_438_400)
        for bad in ["2030-01-01T00:00:00+24:00", "2030-01-01T00:00:00+2:00", "2030-01-01T00:00:00+0200", "2030-01-01T00:00:00+12:60",
                    "2030-02-30T00:00:00Z", "2029-02-29T00:00:00Z", "2030-13-01T00:00:00Z", "2030-01-01T24:00:00Z", "2030-01-01 00:00:00Z",
                    "2030-01-01T00:00:00", "2030-01-01T00:00:00.Z", "soon", "2030-01-01T00:00:00Z "] {
            #expect(Timestamp.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("an operator token's expiresAt: RFC 3339 strictly; an offset is applied, a bad one is 422")
    func tokenExpiry() async throws {
        try await withLiveService { live in
            let offset = try await live.send(.post("/v1/operator-tokens").bearer(live.admin)
                .json(#"{"name": "offset", "scope": "read", "expiresAt": "2030-01-01T00:00:00+02:00"}"#))
            #expect(offset.status == 201 && offset.field("expiresAt") == .string("2029-12-31T22:00:00Z"), "\(offset.text)")
            let fraction = try await live.send(.post("/v1/operator-tokens").bearer(live.admin)
                .json(#"{"name": "fraction", "scope": "read", "expiresAt": "2030-01-01t00:00:00.5z"}"#))
            #expect(fraction.status == 201 && fraction.field("expiresAt") == .string("2030-01-01T00:00:00Z"), "\(fraction.text)")
            for bad in ["2030-01-01T00:00:00+24:00", "2030-01-01T00:00:00+2:00", "2030-02-30T00:00:00Z"] {
                let refused = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "bad", "scope": "read", "expiresAt": "\#(bad)"}"#))
                #expect(refused.status == 422, "\(bad): \(refused.status) \(refused.text)")
            }
        }
    }

    @Test("refused operator writes are audited: a read-scope token's 403 and an unknown app's 404, with their status")
    func refusedWritesAudited() async throws {
        try await withLiveService { live in
            let created = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "ro", "scope": "read"}"#))
            guard case .string(let readOnly)? = created.field("token") else { Issue.record("no token: \(created.text)"); return }
            #expect(try await live.send(.post("/v1/apps").bearer(readOnly).json(#"{"id": "com.x", "name": "X"}"#)).status == 403)
            #expect(try await live.send(.put("/v1/apps/com.nope/schema").bearer(live.admin).json(V.v1)).status == 404)
            var readOnlyEntry = "", missingAppEntry = ""
            for _ in 0..<200 where readOnlyEntry.isEmpty || missingAppEntry.isEmpty {
                readOnlyEntry = try await live.send(.get("/v1/audit?actor=ro").bearer(live.admin)).text
                if !readOnlyEntry.contains(#""status":403"#) { readOnlyEntry = "" }
                missingAppEntry = try await live.send(.get("/v1/audit?app=com.nope").bearer(live.admin)).text
                if !missingAppEntry.contains(#""status":404"#) { missingAppEntry = "" }
                if readOnlyEntry.isEmpty || missingAppEntry.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(readOnlyEntry.contains(#""action":"POST /v1/apps""#), "\(readOnlyEntry)")
            #expect(missingAppEntry.contains(#""actor":"bootstrap","action":"PUT /v1/apps/{appId}/schema","appId":"com.nope""#), "\(missingAppEntry)")
        }
    }

    @Test("the audit log names what a write created: the app a POST made, the token's name, the schema's version")
    func createdResourcesAudited() async throws {
        try await withLiveService { live in
            _ = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let token = try await live.send(.post("/v1/operator-tokens").bearer(live.admin).json(#"{"name": "ci-bot", "scope": "read"}"#))
            #expect(token.status == 201 && token.headers["Location"] == "/v1/operator-tokens/ci-bot", "\(token.text)")
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema").bearer(live.admin).json(V.v2)).status == 201)
            let audit = try await live.send(.get("/v1/audit?limit=10").bearer(live.admin))
            #expect(audit.text.contains(#""action":"POST /v1/apps","appId":"com.myApp","requestId""#), "\(audit.text)")
            #expect(audit.text.contains(#""action":"POST /v1/operator-tokens","target":"ci-bot","requestId""#), "\(audit.text)")
            #expect(audit.text.contains(#""action":"PUT /v1/apps/{appId}/schema","appId":"com.myApp","target":"2","requestId""#), "\(audit.text)")
            // A refused creation made nothing: its entry names no app.
            #expect(try await live.send(.post("/v1/apps").bearer(live.admin).json(#"{"id": "com.myApp", "name": "Again"}"#)).status == 409)
            let refused = try await live.send(.get("/v1/audit?limit=1").bearer(live.admin))
            #expect(refused.text.contains(#""action":"POST /v1/apps","requestId""#) && refused.text.contains(#""status":409"#), "\(refused.text)")
        }
    }

    @Test("the users list refuses a prefix or after that does not decode, instead of listing everyone")
    func undecodablePrefix() async throws {
        try await withLiveService { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            #expect(try await live.send(.patch(app.userPath("bob") + "/customization").bearer(live.admin).json(V.patch(V.hide("bell")))).status == 200)
            for query in ["prefix=%FF", "prefix=%C3", "prefix=%ZZ", "prefix=%", "after=%FF"] {
                let refused = try await live.send(.get("/v1/apps/com.myApp/users?" + query).bearer(live.admin))
                #expect(refused.status == 400 && refused.problemType == "urn:tabstore:problem:invalid-parameter", "\(query): \(refused.text)")
            }
            #expect(try await live.send(.get("/v1/apps/com.myApp/users?prefix=").bearer(live.admin)).text.contains(#""userId":"bob""#))
        }
    }

    @Test("a history page with the schema entry holds limit items; the next page goes on from the newest revision")
    func historyPageWithSchemaEntry() async throws {
        try await withLiveService { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            let bob = app.userPath("bob") + "/customization"
            #expect(try await live.send(.patch(bob).bearer(live.admin).json(V.patch(V.hide("bell")))).status == 200)
            #expect(try await live.send(.patch(bob).bearer(live.admin).json(V.patch(V.hide("news")))).status == 200)
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema").bearer(live.admin).json(V.v2)).status == 201)
            let first = try await live.send(.get(bob + "/history?limit=1").bearer(live.admin))
            guard case .array(let items)? = first.field("items") else { Issue.record("no page: \(first.text)"); return }
            #expect(items.count == 1 && first.text.contains(#""change":"schema""#) && first.field("nextBefore") == .integer(3), "\(first.text)")
            let second = try await live.send(.get(bob + "/history?limit=2&before=3").bearer(live.admin))
            #expect(second.text.contains(#""revision":2,"#) && second.text.contains(#""revision":1,"#), "\(second.text)")
            let whole = try await live.send(.get(bob + "/history?limit=3").bearer(live.admin))
            guard case .array(let all)? = whole.field("items") else { Issue.record("no page: \(whole.text)"); return }
            #expect(all.count == 3 && whole.field("nextBefore") == .null, "\(whole.text)")
        }
    }

    @Test("a misspelled dryRun is 400 and changes nothing; an empty schema is 422 no-visible-tab")
    func rehearsalsAndEmptySchemas() async throws {
        try await withLiveService { live in
            _ = try await Credentials.App.register(on: live, id: "com.myApp", schema: V.v1)
            for query in ["dryrun=true", "dry_run=true", "dryRun=true&force=1"] {
                let schema = try await live.send(.put("/v1/apps/com.myApp/schema?" + query).bearer(live.admin).json(V.v2))
                #expect(schema.status == 400 && schema.problemType == "urn:tabstore:problem:invalid-parameter", "\(query): \(schema.text)")
                let minimum = try await live.send(.patch("/v1/apps/com.myApp?" + query).bearer(live.admin).json(#"{"minimumSchemaVersion": 1}"#))
                #expect(minimum.status == 400, "\(query): \(minimum.text)")
            }
            #expect(try await live.send(.get("/v1/apps/com.myApp").bearer(live.admin)).field("schemaVersion") == .integer(1))
            // A rehearsal is told from the real thing in the audit log.
            #expect(try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true").bearer(live.admin).json(V.v2)).status == 200)
            let audit = try await live.send(.get("/v1/audit?app=com.myApp&limit=1").bearer(live.admin))
            #expect(audit.text.contains(#""action":"PUT /v1/apps/{appId}/schema?dryRun=true""#), "\(audit.text)")
            let empty = try await live.send(.put("/v1/apps/com.myApp/schema").bearer(live.admin).json(#"{"items": []}"#))
            #expect(empty.status == 422 && empty.text.contains(#""code":"no-visible-tab""#), "\(empty.text)")
        }
    }

    @Test("a dry run that changes only a data-driven section's prefix drops the user's data tabs, not the section it keeps")
    func prefixChangeKeepsSection() async throws {
        func schema(_ prefix: String) -> String {
            #"{"items": [{"kind": "tab", "id": "home", "title": "Home"}, {"kind": "section", "id": "pl", "title": "Playlists", "tabs": [], "dynamicTabs": {"idPrefix": "\#(prefix)"}}]}"#
        }
        try await withLiveService { live in
            let app = try await Credentials.App.register(on: live, id: "com.myApp", schema: schema("pl."))
            let set = #"{"op": "setDynamicTabs", "section": "pl", "tabs": [{"id": "pl.a", "title": "A"}]}"#
            #expect(try await live.send(.patch(app.userPath("bob") + "/customization").bearer(live.admin).json(V.patch(set))).status == 200)
            let report = try await live.send(.put("/v1/apps/com.myApp/schema?dryRun=true").bearer(live.admin).json(schema("list.")))
            #expect(
                report.status == 200 && report.ids("droppedIds") == ["pl.a"] && report.field("customizationsAffected") == .integer(1),
                "\(report.text)")
        }
    }
}
