import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// v1.1 over HTTP (issue 14): layout parameters and fields, a user's data-driven tabs, derived ids in answers,
/// the dry run's count of dropped data-driven tabs.
extension APITests {
    static let playlists = """
        {"operations": [{"op": "setDynamicTabs", "section": "playlists", "tabs": [
          {"id": "playlist.all", "title": "All Playlists", "image": "playlist-all"},
          {"id": "playlist.running", "title": "Running", "image": "playlist-running"}]}]}
        """

    @Test("layout: platform and style shape it and name it in the ETag; values outside the lists are 400")
    func layoutParameters() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api, schema: Seeds.music)
            let hide = await api.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "radio", "visibility": "hidden"}]}
                """))
            #expect(hide.status == 200)
            let iPad = await api.send(.get(creds.layout("regular") + "&platform=iPadOS&style=sidebarAdaptable").bearer(creds.userToken))
            #expect(iPad.status == 200)
            #expect(iPad.etag == "\"1.1.regular.iPadOS.sidebarAdaptable\"")
            #expect(iPad.field("platform") == "iPadOS" && iPad.field("style") == "sidebarAdaptable")
            #expect(iPad.field("customizationApplied") == .bool(true))
            #expect(iPad.ids("hidden") == ["radio"])
            #expect(iPad.field("selectionFallback") == .object(JSONObject([("radio", "listenNow"), ("browse", "library.recentlyAdded")])))
            let iPhone = await api.send(.get(creds.layout("compact") + "&platform=iOS").bearer(creds.userToken))
            #expect(iPhone.etag == "\"1.1.compact.iOS\"")
            #expect(iPhone.field("customizationApplied") == .bool(false))
            #expect(iPhone.field("style") == nil)
            #expect(iPhone.ids("tabBar") == ["listenNow", "radio", "search", "browse"])
            // Without a platform: the first version's layout, with the new fields.
            let plain = await api.send(.get(creds.layout("compact")).bearer(creds.userToken))
            #expect(plain.etag == "\"1.1.compact\"" && plain.field("platform") == nil && plain.field("customizationApplied") == .bool(true))
            #expect(await api.send(.get(creds.layout("compact")).bearer(creds.userToken).ifNoneMatch("\"1.1.compact\"")).status == 304)
            #expect(
                await api.send(.get(creds.layout("compact") + "&platform=iOS").bearer(creds.userToken).ifNoneMatch("\"1.1.compact\"")).status == 200)
            for query in ["&platform=android", "&platform=ios", "&style=page", "&platform=", "&style=tabBarOnly&platform=watchOS"] {
                let bad = await api.send(.get(creds.layout("regular") + query).bearer(creds.userToken))
                #expect(bad.status == 400, "\(query)")
                #expect(bad.header("Content-Type") == "application/problem+json", "\(query)")
            }
        }
    }

    @Test("a user's data-driven tabs: stored by PATCH, served with the customization, drawn in layouts, refused with pointers")
    func dataDrivenTabs() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api, schema: Seeds.music)
            let stored = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Self.playlists))
            #expect(stored.status == 200 && stored.etag == "\"1.1\"")
            #expect(
                stored.text.hasSuffix(
                    #""dynamicTabs":{"playlists":[{"id":"playlist.all","title":"All Playlists","image":"playlist-all"},{"id":"playlist.running","title":"Running","image":"playlist-running"}]}}"#
                ))
            let again = await api.send(.patch(creds.customization).bearer(creds.userToken).json(Self.playlists))
            #expect(again.etag == "\"1.1\"", "the same list is no change")
            let read = await api.send(.get(creds.customization).bearer(creds.userToken))
            #expect(read.body == stored.body)
            let layout = await api.send(.get(creds.layout("regular") + "&platform=macOS").bearer(creds.userToken))
            #expect(
                layout.text.contains(
                    #"{"kind":"section","id":"playlists","title":"Playlists","expanded":true,"tabs":[{"kind":"tab","id":"playlist.all","title":"All Playlists","image":"playlist-all"},{"kind":"tab","id":"playlist.running""#
                ))
            let outside = await api.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "playlist.gym", "visibility": "hidden"}]}
                """))
            #expect(outside.status == 422 && outside.codes == ["unknown-tab"])
            let mismatch = await api.send(.put(creds.customization).bearer(creds.userToken).json("""
                {"dynamicTabs": {"playlists": [{"id": "playlist.a", "title": "A"}, {"id": "library.b", "title": "B"}]}}
                """))
            #expect(mismatch.status == 422 && mismatch.codes == ["prefix-mismatch"])
            #expect(mismatch.text.contains(#""pointer":"/dynamicTabs/playlists/1/id""#))
            let tooMany = (0...500).map { #"{"id": "playlist.\#($0)", "title": "P"}"# }.joined(separator: ",")
            let overLimit = await api.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setDynamicTabs", "section": "playlists", "tabs": [\(tooMany)]}]}
                """))
            #expect(overLimit.status == 400 && overLimit.codes == ["too-many-entries"])
            #expect(await api.send(.get(creds.customization).bearer(creds.userToken)).etag == "\"1.1\"", "refusals change nothing")
            // A list whose stored document would pass the size cap is refused whole.
            let long = String(repeating: "x", count: 1000)
            let big = (0..<100).map { #"{"id": "playlist.\#($0)", "title": "\#(long)"}"# }.joined(separator: ",")
            let capped = await api.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setDynamicTabs", "section": "playlists", "tabs": [\(big)]}]}
                """))
            #expect(capped.status == 422 && capped.codes == ["customization-too-large"])
            // The dry run of a schema without the section counts the stored tabs it would drop.
            let dryRun = await api.send(.put("/v1/apps/app.one/schema?dryRun=true").bearer(creds.admin).json(Seeds.articleBasic))
            #expect(dryRun.field("dynamicTabsDropped") == .integer(2))
            #expect(dryRun.field("customizationsAffected") == .integer(1))
            #expect(await api.send(.delete(creds.customization).bearer(creds.userToken)).status == 204)
        }
    }

    @Test("a top-level ForEach: registered, its list stored, drawn as top-level tabs, counted by the dry run")
    func topLevelForEachOverHTTP() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api, schema: Seeds.articleForEach)
            let schema = await api.send(.get("/v1/apps/app.one/schema").bearer(creds.userToken))
            #expect(schema.text.contains(#"{"kind":"forEach","id":"playlists","defaultVisibility":"#))
            #expect(await api.send(.put("/v1/apps/app.one/schema").bearer(creds.admin).json(bytes: schema.body)).status == 200)
            let stored = await api.send(.patch(creds.customization).bearer(creds.userToken).json(#"{"operations": [\#(Seeds.articlePlaylists)]}"#))
            #expect(stored.status == 200 && stored.etag == "\"1.1\"")
            let regular = await api.send(.get(creds.layout("regular") + "&platform=iPadOS").bearer(creds.userToken))
            #expect(regular.ids("sidebar") == ["home", "library", "playlist.morning", "playlist.run", "playlist.focus", "settings"])
            #expect(regular.text.contains(#""sidebar":[{"kind":"tab","id":"home","title":"Головна","systemImage":"house"},"#
                + #"{"kind":"tab","id":"library","title":"Бібліотека","systemImage":"books.vertical"},"#
                + #"{"kind":"tab","id":"playlist.morning","title":"Ранок","systemImage":"music.note"},"#))
            let compact = await api.send(.get(creds.layout("compact") + "&platform=iPadOS").bearer(creds.userToken))
            #expect(compact.ids("tabBar") == ["home", "library", "playlist.morning", "playlist.run"])
            #expect(compact.ids("more") == ["playlist.focus", "settings"])
            let collapse = await api.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setSectionExpanded", "section": "playlists", "expanded": false}]}
                """))
            #expect(collapse.status == 422 && collapse.codes == ["customization-disabled"])
            #expect(collapse.text.contains(#""pointer":"/operations/0/section""#))
            let dryRun = await api.send(.put("/v1/apps/app.one/schema?dryRun=true").bearer(creds.admin).json(Seeds.articleBasic))
            #expect(dryRun.field("dynamicTabsDropped") == .integer(3))
            #expect(dryRun.field("removedIds") == .array([.string("playlists")]))
        }
    }

    @Test("a tab registered without an id: the schema and layouts show its derived id; an operation naming it is 422")
    func derivedIdOverHTTP() async throws {
        try await withInProcessAPI { api in
            let creds = try await Credentials.register(on: api, schema: Seeds.behaviorHomeDisabled)
            let schema = await api.send(.get("/v1/apps/app.one/schema").bearer(creds.userToken))
            #expect(schema.text.contains(#"{"kind":"tab","id":"\#(Seeds.derivedHome)","title":"Home""#))
            // Sending back what GET answered registers nothing new.
            let again = await api.send(.put("/v1/apps/app.one/schema").bearer(creds.admin).json(bytes: schema.body))
            #expect(again.status == 200 && again.field("version") == .integer(1))
            let layout = await api.send(.get(creds.layout("compact")).bearer(creds.userToken))
            #expect(layout.ids("tabBar") == [Seeds.derivedHome.text, "com.myApp.bell"])
            #expect(layout.ids("more") == ["com.myApp.climate", "com.myApp.lights"])
            let named = await api.send(.patch(creds.customization).bearer(creds.userToken).json("""
                {"operations": [{"op": "setTabBarVisibility", "tab": "\(Seeds.derivedHome)", "visibility": "hidden"}]}
                """))
            #expect(named.status == 422 && named.codes == ["customization-disabled"])
        }
    }
}
