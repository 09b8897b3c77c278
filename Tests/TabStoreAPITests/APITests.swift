import Foundation
import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// The REST API over real sockets and a real SQLite file. Errors and probes are in APITests+Errors.swift,
/// conditional requests in APITests+Preconditions.swift and APITests+ETags.swift, caching in
/// APITests+Caching.swift, authentication and methods in APITests+Authentication.swift.
@Suite("REST API end to end (real server, real sockets, real SQLite)", .serialized)
struct APITests {
    static let hideClimateAndMoveLights = """
        {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.climate", "visibility": "hidden"},
                        {"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 0}]}
        """
    static let hideBell = #"{"tabs": {"com.myApp.bell": {"sidebarVisibility": "hidden"}}}"#

    // MARK: Apple's example through the API

    @Test("a user with no customization reads the empty one: revision 0, ETag \"0.1\", private no-cache")
    func emptyCustomization() async throws {
        try await withLiveService { live in
            let creds = try await Credentials.register(on: live, schema: Seeds.apiExample)
            let empty = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(empty.status == 200)
            #expect(empty.field("revision") == .integer(0))
            #expect(empty.etag == "\"0.1\"")
            #expect(empty.header("Cache-Control") == "private, no-cache")
        }
    }

    @Test(
        "Apple's example: hide and move in one PATCH, the layout in both size classes shows them, a reset clears them",
        arguments: PostgresTestCluster.backends)
    func seedWalkthrough(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live, schema: Seeds.apiExample)
            let hidden = try await live.send(.patch(creds.customization).bearer(creds.userToken).json(Self.hideClimateAndMoveLights))
            #expect(hidden.status == 200)
            #expect(hidden.etag == "\"1.1\"")

            let regular = try await live.send(.get(creds.layout("regular")).bearer(creds.userToken))
            #expect(regular.status == 200)
            #expect(regular.ids("hidden") == ["com.myApp.climate"])
            #expect(regular.ids("pinned") == ["com.myApp.search"])
            #expect(regular.ids("sidebar") == ["com.myApp.home", "com.myApp.categories", "com.myApp.playlists"])
            let compact = try await live.send(.get(creds.layout("compact")).bearer(creds.userToken))
            #expect(compact.ids("sidebar").isEmpty)
            #expect(compact.ids("tabBar") == ["com.myApp.home"])

            let reset = try await live.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "resetVisibility"}, {"op": "resetSectionOrder", "section": "com.myApp.categories"}]}
                """))
            #expect(reset.field("revision") == .integer(2))
            #expect(reset.field("tabs") == .object(JSONObject()))
            #expect(reset.field("sections") == .object(JSONObject()))
        }
    }

    @Test("hiding a tab whose sidebar behaviour is disabled is 422 not-hideable, as a problem document", arguments: PostgresTestCluster.backends)
    func disabledTabNotHideable(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live, schema: Seeds.apiExample)
            let refused = try await live.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.home", "visibility": "hidden"}]}
                """))
            #expect(refused.status == 422)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(refused.codes == ["not-hideable"])
        }
    }

    @Test("a layout for an unknown size class is 400", arguments: PostgresTestCluster.backends)
    func unknownSizeClass(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live, schema: Seeds.apiExample)
            let badSize = try await live.send(.get(creds.layout("huge")).bearer(creds.userToken))
            #expect(badSize.status == 400)
        }
    }

    // MARK: Authorization

    @Test(
        "every kind of caller reading a user's customization gets the right status; 401s challenge and leak nothing",
        arguments: PostgresTestCluster.backends)
    func authorizationMatrix(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            let expected: [Caller: Int] = [.otherUser: 403, .otherApp: 403, .user: 200, .operator: 200]
            for caller in Caller.allCases {
                let status = expected[caller] ?? 401
                let response = try await live.send(.get(creds.customization).bearer(creds.token(caller)))
                #expect(response.status == status, "\(caller)")
                if status == 401 {
                    #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(caller)")
                    #expect(response.field("revision") == nil, "\(caller) leaked data")
                }
            }
        }
    }

    @Test("a user token never reaches operator endpoints", arguments: PostgresTestCluster.backends)
    func userTokenNotOperator(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            for request in [TestRequest.get("/v1/apps"), .get("/v1/apps/app.one"), .delete("/v1/apps/app.one"),
                            .post("/v1/apps/app.one/signing-secret"), .get("/v1/apps/app.one/stats")] {
                #expect(try await live.send(request.bearer(creds.userToken)).status == 403, "\(request.method) \(request.target)")
            }
        }
    }

    @Test("users read their own app's schema, not another app's", arguments: PostgresTestCluster.backends)
    func schemaReadersOfTheirApp(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.get("/v1/apps/app.one/schema").bearer(creds.userToken)).status == 200)
            #expect(try await live.send(.get("/v1/apps/app.two/schema").bearer(creds.userToken)).status == 403)
        }
    }

    @Test("rotating the signing secret retires tokens signed with the old one", arguments: PostgresTestCluster.backends)
    func rotationRetiresTokens(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Credentials.register(on: live)
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).status == 200)
            #expect(try await live.send(.post("/v1/apps/app.one/signing-secret").bearer(live.admin)).status == 200)
            #expect(try await live.send(.get(creds.customization).bearer(creds.userToken)).status == 401)
        }
    }

    // MARK: Concurrency and schema evolution

    @Test("two clients patching concurrently lose nothing", arguments: PostgresTestCluster.backends)
    func concurrentPatches(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let items = (0..<40).map { #"{"id": "t\#($0)", "title": "T\#($0)"}"# }.joined(separator: ",")
            let creds = try await Credentials.register(on: live, schema: #"{"items": [{"id": "keep", "title": "Keep"}, \#(items)]}"#)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in 0..<2 {
                    group.addTask {
                        for index in stride(from: device, to: 40, by: 2) {
                            let response = try await live.send(.patch(creds.customization).bearer(creds.userToken).json("""
                                {"operations": [{"op": "setSidebarVisibility", "tab": "t\(index)", "visibility": "hidden"}]}
                                """))
                            #expect(response.status == 200)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = try await live.send(.get(creds.customization).bearer(creds.userToken))
            #expect(final.field("revision") == .integer(40))
            guard case .object(let tabs)? = final.field("tabs") else { Issue.record("no tabs"); return }
            #expect(tabs.keys.count == 40)
        }
    }

    /// `app.one` at schema v1 of `ReconcilerTests` with three customizations: `a` and `b` hide `old`
    /// (which v2 drops), `c` hides `home` (which v2 keeps).
    static func threeCustomizationsOnV1(_ live: LiveService) async throws -> Credentials {
        let creds = try await Credentials.register(on: live, schema: SchemaFixtures.v1)
        for user in ["a", "b", "c"] {
            let tab = user == "c" ? "home" : "old"
            let operation = #"{"op": "setSidebarVisibility", "tab": "\#(tab)", "visibility": "hidden"}"#
            let patch = TestRequest.patch(creds.app.userPath(user) + "/customization").bearer(creds.app.token(for: user))
            #expect(try await live.send(patch.json(#"{"operations": [\#(operation)]}"#)).status == 200, "\(user)")
        }
        return creds
    }

    @Test("registering the identical schema again is 200 and keeps version 1", arguments: PostgresTestCluster.backends)
    func identicalSchemaKeepsVersion(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            _ = try await Self.threeCustomizationsOnV1(live)
            let identical = try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(SchemaFixtures.v1))
            #expect(identical.status == 200)
            #expect(identical.field("version") == .integer(1))
        }
    }

    @Test("a schema whose only change is a title's Unicode normalization is a new version, served as sent", arguments: PostgresTestCluster.backends)
    func schemaTitleBytes(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            #expect(try await live.send(.post("/v1/apps").bearer(live.admin).json(#"{"id": "app.nfc", "name": "NFC"}"#)).status == 201)
            let composed = #"{"items": [{"id": "cafe", "title": "Caf\#u{00E9}"}]}"#
            let decomposed = #"{"items": [{"id": "cafe", "title": "Cafe\#u{0301}"}]}"#
            #expect(try await live.send(.put("/v1/apps/app.nfc/schema").bearer(live.admin).json(composed)).status == 201)
            let dryRun = try await live.send(.put("/v1/apps/app.nfc/schema?dryRun=true").bearer(live.admin).json(decomposed))
            #expect(dryRun.field("identical") == .bool(false))
            let changed = try await live.send(.put("/v1/apps/app.nfc/schema").bearer(live.admin).json(decomposed))
            #expect(changed.status == 201)
            #expect(changed.field("version") == .integer(2))
            // The bytes as sent: e, then the combining acute accent (CC 81), not the precomposed é (C3 A9).
            let served = try await live.send(.get("/v1/apps/app.nfc/schema").bearer(live.admin))
            let holds = { (bytes: [UInt8]) in served.body.indices.contains { served.body[$0...].starts(with: bytes) } }
            #expect(served.status == 200)
            #expect(holds([0x65, 0xCC, 0x81]))
            #expect(!holds([0xC3, 0xA9]))
            // Sent again with the very same bytes: identical, nothing stored.
            let again = try await live.send(.put("/v1/apps/app.nfc/schema").bearer(live.admin).json(decomposed))
            #expect(again.status == 200)
            #expect(again.field("version") == .integer(2))
        }
    }

    @Test("the same schema PUT many times at once: one 201, every other 200 with that version, no 409", arguments: PostgresTestCluster.backends)
    func identicalSchemaConcurrently(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let created = try await live.send(.post("/v1/apps").bearer(live.admin).json(#"{"id": "app.race", "name": "Race"}"#))
            #expect(created.status == 201)
            let statuses = try await withThrowingTaskGroup(of: (Int, JSONValue?).self) { group in
                for _ in 0..<9 {
                    group.addTask {
                        let answer = try await live.send(.put("/v1/apps/app.race/schema").bearer(live.admin).json(SchemaFixtures.v1))
                        return (answer.status, answer.field("version"))
                    }
                }
                return try await group.reduce(into: [(Int, JSONValue?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 201 }.count == 1)
            #expect(statuses.filter { $0.0 == 200 }.count == 8)
            #expect(statuses.allSatisfy { $0.1 == .integer(1) })
        }
    }

    @Test(
        "a dry run counts the customizations a new schema affects and what it removes, and registers nothing", arguments: PostgresTestCluster.backends
    )
    func schemaDryRun(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            _ = try await Self.threeCustomizationsOnV1(live)
            let dryRun = try await live.send(.put("/v1/apps/app.one/schema?dryRun=true").bearer(live.admin).json(SchemaFixtures.v2))
            #expect(dryRun.status == 200)
            #expect(dryRun.field("customizationsChecked") == .integer(3))
            #expect(dryRun.field("customizationsAffected") == .integer(2))
            #expect(dryRun.ids("droppedIds") == ["old"])
            #expect(dryRun.ids("removedIds") == ["old", "s.b"])
            #expect(try await live.send(.get("/v1/apps/app.one/schema").bearer(live.admin)).field("version") == .integer(1))
        }
    }

    @Test("a changed schema is registered as the next version: 201 with its Location", arguments: PostgresTestCluster.backends)
    func schemaNextVersion(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            _ = try await Self.threeCustomizationsOnV1(live)
            let v2 = try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(SchemaFixtures.v2))
            #expect(v2.status == 201)
            #expect(v2.header("Location") == "/v1/apps/app.one/schema/versions/2")
        }
    }

    @Test(
        "a stored customization is read under the new schema version: dropped tabs gone, revision unchanged", arguments: PostgresTestCluster.backends)
    func storedCustomizationReconciled(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Self.threeCustomizationsOnV1(live)
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(SchemaFixtures.v2)).status == 201)
            let read = try await live.send(.get(creds.app.userPath("a") + "/customization").bearer(creds.app.token(for: "a")))
            #expect(read.field("schemaVersion") == .integer(2))
            #expect(read.field("tabs") == .object(JSONObject()))
            #expect(read.field("revision") == .integer(1))
        }
    }

    @Test("earlier schema versions stay readable; a version never registered is 404", arguments: PostgresTestCluster.backends)
    func schemaVersionsReadable(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let creds = try await Self.threeCustomizationsOnV1(live)
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(SchemaFixtures.v2)).status == 201)
            let token = creds.app.token(for: "a")
            #expect(try await live.send(.get("/v1/apps/app.one/schema/versions/1").bearer(token)).field("version") == .integer(1))
            #expect(try await live.send(.get("/v1/apps/app.one/schema/versions/9").bearer(token)).status == 404)
        }
    }

    @Test("stats count the users whose customization still says something after a schema change", arguments: PostgresTestCluster.backends)
    func statsAfterSchemaChange(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            _ = try await Self.threeCustomizationsOnV1(live)
            #expect(try await live.send(.put("/v1/apps/app.one/schema").bearer(live.admin).json(SchemaFixtures.v2)).status == 201)
            let stats = try await live.send(.get("/v1/apps/app.one/stats").bearer(live.admin))
            #expect(stats.field("usersWithCustomization") == .integer(1))
        }
    }
}
