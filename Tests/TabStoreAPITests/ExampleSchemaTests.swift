import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("The example schemas behave as docs/domain.md says")
struct ExampleSchemaTests {
    @Test("every example schema is valid", arguments: Seeds.all.map(\.1))
    func seedsParse(text: String) throws {
        let index = try Seeds.index(text)
        #expect(!index.allTabs.isEmpty || index.schema.items.count > 0)
        // The served form parses back to the same schema.
        let again = try TabSchema.parse(index.schema.json())
        #expect(again == index.schema)
    }

    @Test("000: everything automatic can be hidden and reordered")
    func allAutomatic() throws {
        let index = try Seeds.index(Seeds.behaviorAllAutomatic)
        let result = try CustomizationEditor.apply(try ops("""
            {"operations": [
              {"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"},
              {"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.lights", "toIndex": 0}]}
            """), to: .empty, index: index)
        #expect(result.tabs["com.myApp.bell"]?.sidebarVisibility == .hidden)
        #expect(result.sections["com.myApp.categories"]?.tabOrder == ["com.myApp.lights", "com.myApp.climate"])
        let layout = Layout(customization: result, index: index, sizeClass: .regular)
        #expect(layout.hidden == ["com.myApp.bell"])
        // Coupling: hidden in the sidebar is hidden in the tab bar too.
        #expect(!layout.tabBar.map(\.id).contains("com.myApp.bell"))
    }

    @Test("000: a .disabled tab cannot be hidden or moved; without a customization ID no operation can name it")
    func disabledHome() throws {
        let index = try Seeds.index(Seeds.behaviorHomeDisabled)
        let home = try #require(index.allTabs.first)
        #expect(home.tab.id == Seeds.derivedHome)
        #expect(home.tab.hasDerivedId)
        for placement in ["Sidebar", "TabBar"] {
            for visibility in ["hidden", "visible", "automatic"] {
                #expect(refusalCodes {
                    _ = try CustomizationEditor.apply(try ops("""
                        {"operations": [{"op": "set\(placement)Visibility", "tab": "\(Seeds.derivedHome)", "visibility": "\(visibility)"}]}
                        """), to: .empty, index: index)
                } == ["customization-disabled"])
            }
        }
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.bell", "\(Seeds.derivedHome)"]}]}
                """), to: .empty, index: index)
        } == ["customization-disabled"])
        // With a customization ID (the Home of examples/schema.json and the walkthrough), the tab is named and refused by its behavior.
        let named = try Seeds.index(Seeds.apiExample)
        for placement in ["Sidebar", "TabBar"] {
            #expect(refusalCodes {
                _ = try CustomizationEditor.apply(try ops("""
                    {"operations": [{"op": "set\(placement)Visibility", "tab": "com.myApp.home", "visibility": "hidden"}]}
                    """), to: .empty, index: named)
            } == ["not-hideable"])
        }
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.climate", "com.myApp.home"]}]}
                """), to: .empty, index: try Seeds.index(Seeds.behaviorAllAutomatic.replacingOccurrences(
                    of: #""title": "Home", "systemImage": "house""#,
                    with: #""title": "Home", "systemImage": "house", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}"#)))
        } == ["not-movable"])
        // Reordering the others leaves Home at its builder position in the bar, and layouts show its derived id.
        let moved = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.lights", "com.myApp.bell"]}]}
            """), to: .empty, index: index)
        let regular = Layout(customization: moved, index: index, sizeClass: .regular)
        #expect(regular.tabBar.map(\.id) == [Seeds.derivedHome, "com.myApp.lights", "com.myApp.bell", "com.myApp.climate"])
        #expect(regular.sidebar.first == .tab(home.tab))
        // On iPhone the section's tabs are in More, in the section's order (v1.1: not flattened into the bar).
        let compact = Layout(customization: moved, index: index, sizeClass: .compact)
        #expect(compact.tabBar.map(\.id) == [Seeds.derivedHome, "com.myApp.bell"])
        #expect(compact.more.map(\.id) == ["com.myApp.climate", "com.myApp.lights"])
    }

    @Test("000: a .reorderable section's tabs move in the sidebar; hiding follows each tab's own behavior")
    func reorderableSection() throws {
        let index = try Seeds.index(Seeds.behaviorSectionReorderable)
        let moved = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabOrder", "section": "com.myApp.categories",
                             "tabOrder": ["com.myApp.lights", "com.myApp.climate"]}]}
            """), to: .empty, index: index)
        let layout = Layout(customization: moved, index: index, sizeClass: .regular)
        guard case .section(let section) = layout.sidebar.last else { Issue.record("no section"); return }
        #expect(section.tabs.map(\.id) == ["com.myApp.lights", "com.myApp.climate"])
        // docs/devices.md's Idempotency-Key example hides Climate, a tab of a reorderable section: the section governs reordering, not hiding.
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.climate", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == [])
        // A tab that is itself .reorderable moves but cannot be hidden.
        let own = try Seeds.index(Seeds.behaviorSectionReorderable.replacingOccurrences(
            of: #""title": "Climate", "systemImage": "fan""#,
            with: #""title": "Climate", "systemImage": "fan", "customizationBehavior": {"sidebar": "reorderable"}"#))
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.climate", "visibility": "hidden"}]}
                """), to: .empty, index: own)
        } == ["not-hideable"])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.climate", "toIndex": 1}]}
                """), to: .empty, index: own)
        } == [])
        // Top-level tabs are not governed by the section and stay hideable.
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.bell", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == [])
    }

    @Test("000: reorderable in the sidebar, disabled in the tab bar")
    func perPlacement() throws {
        let index = try Seeds.index(Seeds.behaviorPerPlacement)
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "moveTab", "section": "com.myApp.categories", "tab": "com.myApp.climate", "toIndex": 1}]}
                """), to: .empty, index: index)
        } == [])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarVisibility", "tab": "com.myApp.climate", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == ["not-hideable"])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.lights"]}]}
                """), to: .empty, index: index)
        } == ["not-movable"])
    }

    @Test("001: Browse only in compact, Library and Playlists only in regular")
    func musicSizeClasses() throws {
        let index = try Seeds.index(Seeds.music)
        let compact = Layout(customization: .empty, index: index, sizeClass: .compact)
        #expect(compact.sidebar.isEmpty)
        #expect(compact.tabBar.map(\.id) == ["listenNow", "radio", "search", "browse"])
        #expect(compact.more.isEmpty)
        let regular = Layout(customization: .empty, index: index, sizeClass: .regular)
        let ids = regular.sidebar.map { item -> Identifier in
            switch item {
            case .tab(let tab): tab.id
            case .section(let section): section.section.id
            }
        }
        #expect(ids == ["listenNow", "radio", "search", "library", "playlists"])
        // A user's playlists (data-driven tabs, stored by a client) show in the regular sidebar, in the app's order
        // and with their titles and images; ForEach tabs cannot be dragged by default.
        let custom = try CustomizationEditor.apply(try ops(#"{"operations": [\#(Seeds.musicPlaylists)]}"#), to: .empty, index: index)
        let withPlaylists = Layout(customization: custom, index: index, sizeClass: .regular)
        guard case .section(let playlists) = withPlaylists.sidebar.last else { Issue.record("no section"); return }
        #expect(playlists.tabs.map(\.id) == ["playlist.all", "playlist.running"])
        #expect(playlists.tabs.map(\.title) == ["All Playlists", "Running"])
        #expect(playlists.tabs.map(\.image) == ["playlist-all", "playlist-running"])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabOrder", "section": "playlists", "tabOrder": ["playlist.running", "playlist.all"]}]}
                """), to: custom, index: index)
        } == ["not-movable"])
    }

    @Test("002: ForEach tabs made .reorderable move in the sidebar but cannot be hidden; Home disabled for both placements")
    func articleCustomization() throws {
        let index = try Seeds.index(Seeds.articleCustomization)
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "app.tab.home", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == ["not-hideable"])
        // Collections reorder in the sidebar but cannot be hidden (.reorderable).
        let ordered = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabOrder", "section": "app.section.collections",
                             "tabOrder": ["app.tab.collection.b", "app.tab.collection.a"]}]}
            """), to: .empty, index: index)
        #expect(ordered.sections["app.section.collections"]?.tabOrder == ["app.tab.collection.b", "app.tab.collection.a"])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "app.tab.collection.a", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == ["not-hideable"])
        // iPhone: the section's tabs go to More, without headers, in the user's order.
        let compact = Layout(customization: ordered, index: index, sizeClass: .compact)
        #expect(compact.tabBar.map(\.id) == ["app.tab.home"])
        #expect(compact.more.map(\.id) == ["app.tab.collection.b", "app.tab.collection.a"])
    }

    @Test("002: a ForEach directly in the TabView: top-level tabs at its place, without a header; in the compact bar, not in More")
    func articleForEach() throws {
        let index = try Seeds.index(Seeds.articleForEach)
        let sidebarIds = { (layout: Layout) in
            layout.sidebar.map { item -> String in
                switch item {
                case .tab(let tab): tab.id.text
                case .section(let section): "section \(section.section.id)"
                }
            }
        }
        // Before a client stores the person's playlists the service knows none: the three static tabs.
        let none = Layout(customization: .empty, index: index, sizeClass: .regular)
        #expect(sidebarIds(none) == ["home", "library", "settings"])
        #expect(Layout(customization: .empty, index: index, sizeClass: .compact).tabBar.map(\.id) == ["home", "library", "settings"])
        // With them: in the sidebar among the top-level tabs, at the ForEach's place, with their titles and images.
        let stored = try CustomizationEditor.apply(try ops(#"{"operations": [\#(Seeds.articlePlaylists)]}"#), to: .empty, index: index)
        let regular = Layout(customization: stored, index: index, sizeClass: .regular)
        #expect(sidebarIds(regular) == ["home", "library", "playlist.morning", "playlist.run", "playlist.focus", "settings"])
        #expect(regular.sidebar[2] == .tab(SchemaTab(id: "playlist.morning", title: "Ранок", systemImage: "music.note")))
        #expect(regular.tabBar.map(\.id) == ["home", "library", "playlist.morning", "playlist.run", "playlist.focus", "settings"])
        // iPhone: top-level tabs of the bar, counting toward five: six items are four and More (the bar's overflow).
        let compact = Layout(customization: stored, index: index, sizeClass: .compact)
        #expect(compact.tabBar.map(\.id) == ["home", "library", "playlist.morning", "playlist.run"])
        #expect(compact.more.map(\.id) == ["playlist.focus", "settings"])
        // ForEach tabs hide but do not move by default, in the bar or among themselves; no header to collapse.
        for (operation, code) in [
            (#"{"op": "setTabBarOrder", "tabBarOrder": ["playlist.focus", "home"]}"#, "not-movable"),
            (#"{"op": "moveTab", "section": "playlists", "tab": "playlist.focus", "toIndex": 0}"#, "not-movable"),
            (#"{"op": "setSectionExpanded", "section": "playlists", "expanded": false}"#, "customization-disabled"),
            (#"{"op": "setTabBarVisibility", "tab": "playlist.morning", "visibility": "hidden"}"#, nil),
        ] {
            #expect(refusalCodes {
                _ = try CustomizationEditor.apply(try ops(#"{"operations": [\#(operation)]}"#), to: stored, index: index)
            } == (code.map { [$0] } ?? []), "\(operation)")
        }
        // One hidden in the bar: five items fit, no More; the sidebar still shows it.
        let hidden = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabBarVisibility", "tab": "playlist.morning", "visibility": "hidden"}]}
            """), to: stored, index: index)
        let fewer = Layout(customization: hidden, index: index, sizeClass: .compact)
        #expect(fewer.tabBar.map(\.id) == ["home", "library", "playlist.run", "playlist.focus", "settings"])
        #expect(fewer.more.isEmpty)
        #expect(fewer.selectionFallback == [Layout.Fallback(hidden: "playlist.morning", select: "home")])
        #expect(sidebarIds(Layout(customization: hidden, index: index, sizeClass: .regular)).contains("playlist.morning"))
    }

    /// DOMAIN: with six or more non-pinned tab-bar items in compact, the bar holds the first four and More the rest.
    /// (tabs, with a pinned search tab, expected bar, expected More)
    static let moreRows: [(Int, Bool, [Identifier], [Identifier])] = [
        (5, false, ["t1", "t2", "t3", "t4", "t5"], []),
        (5, true, ["t1", "t2", "t3", "t4", "t5"], []),  // the pinned tab is not counted
        (6, false, ["t1", "t2", "t3", "t4"], ["t5", "t6"]),
        (7, false, ["t1", "t2", "t3", "t4"], ["t5", "t6", "t7"]),
    ]

    @Test("002: six or more tabs in compact show four plus More", arguments: moreRows)
    func moreList(count: Int, pinned: Bool, bar: [Identifier], more: [Identifier]) throws {
        var items = (1...count).map { "{\"id\": \"t\($0)\", \"title\": \"T\($0)\"}" }
        if pinned { items.append(#"{"id": "s", "title": "Search", "role": "search"}"#) }
        let index = try Seeds.index("""
            {"items": [\(items.joined(separator: ","))]}
            """)
        let compact = Layout(customization: .empty, index: index, sizeClass: .compact)
        #expect(compact.tabBar.map(\.id) == bar)
        #expect(compact.more.map(\.id) == more)
        #expect(compact.pinned.map(\.id) == (pinned ? ["s"] : []))
        let regular = Layout(customization: .empty, index: index, sizeClass: .regular)
        #expect(regular.more.isEmpty)
        #expect(regular.tabBar.count == count)
    }

    @Test("the API example's layout")
    func apiExampleLayout() throws {
        let index = try Seeds.index(Seeds.apiExample)
        let custom = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setSidebarVisibility", "tab": "com.myApp.climate", "visibility": "hidden"},
                            {"op": "setTabOrder", "section": "com.myApp.categories", "tabOrder": ["com.myApp.lights", "com.myApp.climate"]}]}
            """), to: .empty, index: index)
        #expect(refusalCodes {}.isEmpty)
        let layout = Layout(customization: custom, index: index, sizeClass: .regular)
        let encoded = JSONWriter.string(layout.json(appId: "com.myApp", userId: "alice", customization: custom))
        #expect(encoded.contains(#""tabBar":[{"kind":"tab","id":"com.myApp.home","title":"Home","systemImage":"house"}]"#))
        // v1.1: the search tab carries the key a client localizes.
        #expect(
            encoded.contains(
                #""pinned":[{"kind":"tab","id":"com.myApp.search","title":"Search","titleKey":"Search","systemImage":"magnifyingglass","role":"search"}]"#
            ))
        #expect(encoded.contains(#""hidden":["com.myApp.climate"]"#))
        #expect(
            encoded.contains(
                #"{"kind":"section","id":"com.myApp.categories","title":"Categories","expanded":true,"tabs":[{"kind":"tab","id":"com.myApp.lights","title":"Lights","systemImage":"lightbulb"}]}"#
            ))
    }
}
