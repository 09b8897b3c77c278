import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// Several app versions: the minimum, history and revert, feeds and long polls per version.
extension AppVersionsTests {
    @Test("the minimum: dry run lists the users and ids it would drop, raising drops at the next write, lowering after that is 409",
          arguments: PostgresTestCluster.backends)
    func minimumSchemaVersion(_ backend: TestBackend) async throws {
        try await withLiveService(backend: backend) { live in
            let fixture = try await Fixture.make(on: live, v2: false)
            let admin = live.admin
            for user in ["bob", "alice"] {
                let answer = try await live.send(
                    .patch(fixture.app.userPath(user) + "/customization").bearer(admin).json(Self.patch(Self.hide("bell"))))
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
            #expect(
                dry.text.contains(#""affectedUsers":[{"userId":"alice","droppedIds":["com.myApp.bell"]}]"#)
                    && dry.field("affectedUsersNext") == .string("alice"))
            let page2 = try await live.send(
                .patch("/v1/apps/com.myApp?dryRun=true&limit=1&after=alice").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#))
            #expect(page2.text.contains(#""userId":"bob""#) && page2.field("affectedUsersNext") == .null)
            #expect(
                try await live.send(.get("/v1/apps/com.myApp").bearer(admin)).field("minimumSchemaVersion") == .integer(1),
                "the dry run stored nothing")
            // Raise, and lower again before any write dropped anything: allowed.
            #expect(
                try await live.send(.patch("/v1/apps/com.myApp").bearer(admin).json(#"{"minimumSchemaVersion": 2}"#)).field("minimumSchemaVersion")
                    == .integer(2))
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
            #expect(
                reverted.status == 200 && reverted.revision == 4 && Self.visibility(reverted, "news") == nil
                    && Self.visibility(reverted, "garden") == "hidden")
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
            #expect(
                ipadEvent.id == "1.2" && ipadEvent.data?.contains("com.myApp.bell") == false
                    && ipadEvent.data?.contains(#""schemaVersion":2"#) == true)
            // A long poll under v1 with the v1 ETag is answered under v1 once the iPad writes (registered or not when
            // the write commits: either way the answer is the new revision as v1 sees it).
            async let polled = live.send(.get(fixture.at(fixture.customization, 1, "waitSeconds=30")).bearer(token).ifNoneMatch("\"1.1\""))
            #expect(
                try await live.send(.patch(fixture.at(fixture.customization, 2)).bearer(token).json(Self.patch(Self.hide("garden")))).status == 200)
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
