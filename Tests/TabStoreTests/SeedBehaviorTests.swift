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

@Suite("Seed examples behave as the documents say")
struct SeedBehaviorTests {
    @Test("every seed example is a valid schema", arguments: Seeds.all.map(\.1))
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

    @Test("000: a .disabled tab cannot be hidden or moved")
    func disabledHome() throws {
        let index = try Seeds.index(Seeds.behaviorHomeDisabled)
        for placement in ["Sidebar", "TabBar"] {
            #expect(refusalCodes {
                _ = try CustomizationEditor.apply(try ops("""
                    {"operations": [{"op": "set\(placement)Visibility", "tab": "com.myApp.home", "visibility": "hidden"}]}
                    """), to: .empty, index: index)
            } == ["not-hideable"])
        }
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.bell", "com.myApp.home"]}]}
                """), to: .empty, index: index)
        } == ["not-movable"])
        // Reordering the others leaves Home at its builder position in the bar.
        let moved = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["com.myApp.lights", "com.myApp.bell"]}]}
            """), to: .empty, index: index)
        let layout = Layout(customization: moved, index: index, sizeClass: .compact)
        #expect(layout.tabBar.map(\.id) == ["com.myApp.home", "com.myApp.lights", "com.myApp.bell", "com.myApp.climate"])
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
        // API.md hides a tab of a reorderable section: the section governs reordering, not hiding.
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
        // A user's playlists (dynamic tabs) can be ordered and show in the regular sidebar.
        let custom = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabOrder", "section": "playlists", "tabOrder": ["playlist.running", "playlist.all"]}]}
            """), to: .empty, index: index)
        let withPlaylists = Layout(customization: custom, index: index, sizeClass: .regular)
        guard case .section(let playlists) = withPlaylists.sidebar.last else { Issue.record("no section"); return }
        #expect(playlists.tabs.map(\.id) == ["playlist.running", "playlist.all"])
    }

    @Test("002: collections in sections, search pinned, Home disabled for both placements")
    func articleCollections() throws {
        let index = try Seeds.index(Seeds.articleCustomization)
        let compact = Layout(customization: .empty, index: index, sizeClass: .compact)
        #expect(compact.pinned.map(\.id) == ["app.tab.search"])
        #expect(compact.pinned.first?.title == "Search")
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "app.tab.home", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == ["not-hideable"])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarOrder", "tabBarOrder": ["app.tab.search"]}]}
                """), to: .empty, index: index)
        } == ["pinned-tab"])
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
        // Sections are flattened in compact: dynamic tabs join the bar.
        let flat = Layout(customization: ordered, index: index, sizeClass: .compact)
        #expect(flat.tabBar.map(\.id) == ["app.tab.home", "app.tab.collection.b", "app.tab.collection.a"])
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

    @Test("API.md example layout")
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
        #expect(encoded.contains(#""pinned":[{"kind":"tab","id":"com.myApp.search","title":"Search","systemImage":"magnifyingglass","role":"search"}]"#))
        #expect(encoded.contains(#""hidden":["com.myApp.climate"]"#))
        #expect(encoded.contains(#"{"kind":"section","id":"com.myApp.categories","title":"Categories","expanded":true,"tabs":[{"kind":"tab","id":"com.myApp.lights","title":"Lights","systemImage":"lightbulb"}]}"#))
    }
}
