import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// Several app versions: data-driven lists across versions' prefixes, and the rules every supported version keeps.
extension AppVersionsTests {
    /// `dyn.app`: v1's section `lists` takes data tabs under `d.`, v2's under `e.`; a Home tab in both.
    static func prefixedApp(on api: any TestClient) async throws -> (app: Credentials.App, path: String, token: String) {
        let section = #"{"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "PREFIX"}, "tabs": []}"#
        func schema(_ prefix: String) -> String {
            #"{"items": [{"kind": "tab", "id": "home", "title": "Home", "systemImage": "house"}, \#(section.replacingOccurrences(of: "PREFIX", with: prefix))]}"#
        }
        let app = try await Credentials.App.register(on: api, id: "dyn.app", schema: schema("d."))
        #expect(try await api.send(.put("/v1/apps/dyn.app/schema").bearer(api.admin).json(schema("e."))).status == 201)
        return (app, app.userPath("u") + "/customization", app.token(for: "u"))
    }

    static func list(_ ids: [String]) -> String {
        #"{"op": "setDynamicTabs", "section": "lists", "tabs": [\#(ids.map { #"{"id": "\#($0)", "title": "\#($0)"}"# }.joined(separator: ", "))]}"#
    }

    @Test("a DELETE or a PUT without the list under one version leaves the entries of another version's prefix, and their choices")
    func listsSurviveDeleteAndPut() async throws {
        try await withInProcessAPI { api in
            let (_, path, token) = try await Self.prefixedApp(on: api)
            let hide = #", {"op": "setSidebarVisibility", "tab": "d.1", "visibility": "hidden"}"#
            #expect(await api.send(.patch(path + "?schemaVersion=1").bearer(token).json(Self.patch(Self.list(["d.1", "d.2"]) + hide))).revision == 1)
            // Version 2 sees no list of its own: a DELETE forgets nothing it sees, and stores nothing.
            let deleted = await api.send(.delete(path + "?schemaVersion=2").bearer(token))
            #expect(deleted.status == 204)
            let phone = await api.send(.get(path + "?schemaVersion=1").bearer(token))
            #expect(phone.revision == 1 && phone.text.contains(#"[{"id":"d.1","title":"d.1"},{"id":"d.2","title":"d.2"}]"#))
            // Version 2 stores its list, then a PUT without it: v1's entries and choice stay.
            #expect(await api.send(.patch(path + "?schemaVersion=2").bearer(token).json(Self.patch(Self.list(["e.1"])))).status == 200)
            #expect(await api.send(.put(path + "?schemaVersion=2").bearer(token).json("{}")).status == 200)
            let again = await api.send(.get(path + "?schemaVersion=1").bearer(token))
            #expect(
                again.text.contains(#"[{"id":"d.1","title":"d.1"},{"id":"d.2","title":"d.2"}]"#)
                    && again.text.contains(#""d.1":{"sidebarVisibility":"hidden""#))
            #expect(!again.text.contains("e.1"))
            let ipad = await api.send(.get(path + "?schemaVersion=2").bearer(token))
            #expect(!ipad.text.contains("e.1") && !ipad.text.contains("d.1"))
        }
    }

    @Test("choices an old version made before any list was stored survive a new version storing its list")
    func choicesBeforeAnyList() async throws {
        try await withInProcessAPI { api in
            let (_, path, token) = try await Self.prefixedApp(on: api)
            // Version 1 never stores a list: any id under its prefix is a tab it can hide.
            #expect(
                await api.send(
                    .patch(path + "?schemaVersion=1").bearer(token).json(
                        Self.patch(#"{"op": "setSidebarVisibility", "tab": "d.5", "visibility": "hidden"}"#))
                ).status == 200)
            #expect(await api.send(.patch(path + "?schemaVersion=2").bearer(token).json(Self.patch(Self.list(["e.1"])))).status == 200)
            let phone = await api.send(.get(path + "?schemaVersion=1").bearer(token))
            #expect(phone.text.contains(#""d.5":{"sidebarVisibility":"hidden""#) && !phone.text.contains("e.1"))
            // And it can still name its ids: the list stored is version 2's, not one version 1 stored.
            #expect(
                await api.send(
                    .patch(path + "?schemaVersion=1").bearer(token).json(
                        Self.patch(#"{"op": "setSidebarVisibility", "tab": "d.6", "visibility": "hidden"}"#))
                ).status == 200)
        }
    }

    @Test("a write under one version may not leave another supported version with no visible tab")
    func noVisibleTabInAnyVersion() async throws {
        try await withInProcessAPI { api in
            func schema(_ tabs: [String]) -> String {
                #"{"items": [\#(tabs.map { #"{"kind": "tab", "id": "\#($0)", "title": "\#($0)", "systemImage": "circle"}"# }.joined(separator: ", "))]}"#
            }
            let app = try await Credentials.App.register(on: api, id: "vis.app", schema: schema(["h", "a"]))
            #expect(await api.send(.put("/v1/apps/vis.app/schema").bearer(api.admin).json(schema(["h", "g"]))).status == 201)
            let token = app.token(for: "u")
            let path = app.userPath("u") + "/customization"
            func hide(_ tab: String) -> String { Self.patch(#"{"op": "setSidebarVisibility", "tab": "\#(tab)", "visibility": "hidden"}"#) }
            #expect(await api.send(.patch(path + "?schemaVersion=1").bearer(token).json(hide("a"))).status == 200)
            // Version 2 still shows g, but hiding h would leave version 1 with nothing.
            let refused = await api.send(.patch(path + "?schemaVersion=2").bearer(token).json(hide("h")))
            #expect(refused.status == 422 && refused.codes == ["no-visible-tab"] && refused.text.contains("schema version 1"))
            #expect(await api.send(.patch(path + "?schemaVersion=2").bearer(token).json(hide("g"))).status == 200)
        }
    }
}
