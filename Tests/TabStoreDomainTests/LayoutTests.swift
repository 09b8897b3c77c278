import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// The layout rules of v1.1 (docs/domain.md "Layout: what the TabView shows"): iPhone's More, platforms and styles, selection
/// fallbacks, the search tab's label, section expansion defaults.
@Suite("Layouts: More, platforms, selection, search, expansion")
struct LayoutTests {
    /// `top` top-level tabs t1…, a section with `inSection` tabs s1…, and a search tab when `search`.
    static func schema(top: Int, inSection: Int, search: Bool) throws -> SchemaIndex {
        var items = (0..<top).map { #"{"id": "t\#($0 + 1)", "title": "T\#($0 + 1)"}"# }
        if search { items.append(#"{"id": "s", "role": "search"}"#) }
        if inSection > 0 {
            let tabs = (0..<inSection).map { #"{"id": "s\#($0 + 1)", "title": "S\#($0 + 1)"}"# }.joined(separator: ",")
            items.append(#"{"kind": "section", "id": "sec", "title": "Sec", "tabs": [\#(tabs)]}"#)
        }
        return try Seeds.index(#"{"items": [\#(items.joined(separator: ","))]}"#)
    }

    struct MoreRow: Sendable, CustomStringConvertible {
        let top: Int
        let inSection: Int
        var search = false
        /// Tabs the user hid in the tab bar.
        var hiddenInBar: [Identifier] = []
        let bar: [Identifier]
        let more: [Identifier]
        var description: String {
            "\(top) top-level, \(inSection) in a section\(search ? ", search" : "")\(hiddenInBar.isEmpty ? "" : ", \(hiddenInBar) hidden")"
        }
    }

    /// The iPhone (docs/domain.md "Layout: what the TabView shows"): a TabSection collapses, all its tabs appear in a
    /// row in More without section headers, and at most five tabs are visible, the sixth and later fold into More
    /// (More counts as one of the five).
    static let moreRows: [MoreRow] = [
        MoreRow(top: 5, inSection: 0, bar: ["t1", "t2", "t3", "t4", "t5"], more: []),
        MoreRow(top: 6, inSection: 0, bar: ["t1", "t2", "t3", "t4"], more: ["t5", "t6"]),
        MoreRow(top: 4, inSection: 1, bar: ["t1", "t2", "t3", "t4"], more: ["s1"]),
        MoreRow(top: 5, inSection: 1, bar: ["t1", "t2", "t3", "t4"], more: ["t5", "s1"]),
        MoreRow(top: 5, inSection: 2, search: true, bar: ["t1", "t2", "t3", "t4"], more: ["t5", "s1", "s2"]),
        MoreRow(top: 1, inSection: 3, bar: ["t1"], more: ["s1", "s2", "s3"]),
        MoreRow(top: 0, inSection: 2, bar: [], more: ["s1", "s2"]),
        MoreRow(top: 6, inSection: 0, search: true, hiddenInBar: ["t2"], bar: ["t1", "t3", "t4", "t5", "t6"], more: []),
        MoreRow(top: 5, inSection: 1, hiddenInBar: ["s1"], bar: ["t1", "t2", "t3", "t4", "t5"], more: []),
        MoreRow(top: 4, inSection: 2, hiddenInBar: ["s2"], bar: ["t1", "t2", "t3", "t4"], more: ["s1"]),
    ]

    @Test("compact: sections' tabs in More, at most five bar items counting More, pinned tabs apart", arguments: moreRows)
    func more(row: MoreRow) throws {
        let index = try Self.schema(top: row.top, inSection: row.inSection, search: row.search)
        let custom = Customization(tabs: Dictionary(uniqueKeysWithValues: row.hiddenInBar.map { ($0, .init(tabBarVisibility: .hidden)) }))
        let compact = Layout(customization: custom, index: index, sizeClass: .compact)
        #expect(compact.tabBar.map(\.id) == row.bar)
        #expect(compact.more.map(\.id) == row.more)
        #expect(compact.pinned.map(\.id) == (row.search ? ["s"] : []))
        #expect(compact.hidden == row.hiddenInBar)
        #expect(compact.tabBar.count + (compact.more.isEmpty ? 0 : 1) <= Layout.compactBarItems)
    }

    @Test("where the user's choices apply", arguments: [
        (nil, nil, [], true), (Platform.iPadOS, nil, [], true), (.iPadOS, TabViewStyle.sidebarAdaptable, [], true), (.iPadOS, .tabBarOnly, [], false),
        (.iOS, nil, [], false), (.macOS, .sidebarAdaptable, [], false), (.visionOS, nil, [], false), (.tvOS, nil, [], false),
        (.iOS, .tabBarOnly, [Platform.macOS, .iOS], true), (.macOS, nil, [.macOS, .iOS], true), (.visionOS, nil, [.macOS, .iOS], false),
        (.iPadOS, .tabBarOnly, [.macOS, .iOS], false), (.iPadOS, .tabBarOnly, [.iPadOS], true),
    ] as [(Platform?, TabViewStyle?, [Platform], Bool)])
    func applied(platform: Platform?, style: TabViewStyle?, opted: [Platform], applies: Bool) throws {
        let schema = TabSchema(items: [.tab(SchemaTab(id: "a", title: "A"))], customizablePlatforms: opted)
        #expect(CustomizationRules.appliesCustomization(schema, platform: platform, style: style) == applies)
    }

    @Test("the shape each platform, style and size class gets", arguments: [
        (nil, nil, SizeClass.regular, Layout.Shape.sidebar), (nil, nil, .compact, .compact), (nil, TabViewStyle.tabBarOnly, .regular, .tabBar),
        (Platform.iPadOS, nil, .regular, .sidebar), (.iPadOS, .tabBarOnly, .regular, .tabBar), (.iPadOS, .sidebarAdaptable, .compact, .compact),
        (.macOS, nil, .compact, .sidebar), (.macOS, .tabBarOnly, .regular, .tabBar), (.visionOS, .sidebarAdaptable, .compact, .sidebar),
        (.iOS, nil, .regular, .compact), (.iOS, .sidebarAdaptable, .compact, .compact), (.tvOS, .tabBarOnly, .regular, .compact),
    ] as [(Platform?, TabViewStyle?, SizeClass, Layout.Shape)])
    func shape(platform: Platform?, style: TabViewStyle?, sizeClass: SizeClass, shape: Layout.Shape) {
        #expect(LayoutRequest(sizeClass: sizeClass, platform: platform, style: style).shape == shape)
    }

    @Test("where choices do not apply the layout follows the schema's defaults, with the user's data-driven tabs")
    func notApplied() throws {
        let index = try Seeds.index(Seeds.articleCustomization)
        let custom = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setDynamicTabs", "section": "app.section.collections", "tabs": [
              {"id": "app.tab.collection.a", "title": "A"}, {"id": "app.tab.collection.b", "title": "B"}]},
              {"op": "setTabOrder", "section": "app.section.collections", "tabOrder": ["app.tab.collection.b", "app.tab.collection.a"]},
              {"op": "setSectionExpanded", "section": "app.section.collections", "expanded": false}]}
            """), to: .empty, index: index)
        let mac = Layout(customization: custom, index: index, request: LayoutRequest(sizeClass: .regular, platform: .macOS))
        #expect(!mac.customizationApplied)
        guard case .section(let section) = mac.sidebar.last else { Issue.record("no section"); return }
        #expect(section.tabs.map(\.id) == ["app.tab.collection.a", "app.tab.collection.b"])
        #expect(section.expanded)
        let iPad = Layout(customization: custom, index: index, request: LayoutRequest(sizeClass: .regular, platform: .iPadOS))
        #expect(iPad.customizationApplied)
        guard case .section(let mine) = iPad.sidebar.last else { Issue.record("no section"); return }
        #expect(mine.tabs.map(\.id) == ["app.tab.collection.b", "app.tab.collection.a"])
        #expect(!mine.expanded)
        // Without a platform: the first version's behaviour, choices applied.
        #expect(Layout(customization: custom, index: index, sizeClass: .regular).sidebar == iPad.sidebar)
    }

    @Test("001: selection falls back to the stand-in where the size class hides a tab, else to the first visible tab")
    func selectionFallback() throws {
        let index = try Seeds.index(Seeds.music)
        let custom = try CustomizationEditor.apply(try ops(#"{"operations": [\#(Seeds.musicPlaylists)]}"#), to: .empty, index: index)
        let compact = Layout(customization: custom, index: index, sizeClass: .compact)
        #expect(compact.selectionFallback == [
            .init(hidden: "library.recentlyAdded", select: "browse"), .init(hidden: "library.artists", select: "browse"),
            .init(hidden: "playlist.all", select: "browse"), .init(hidden: "playlist.running", select: "browse"),
        ])
        let regular = Layout(customization: custom, index: index, sizeClass: .regular)
        #expect(regular.selectionFallback == [.init(hidden: "browse", select: "library.recentlyAdded")])
        // A tab the user hid falls back to the first visible tab; so does one whose stand-in the user hid.
        let hidden = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setSidebarVisibility", "tab": "listenNow", "visibility": "hidden"},
                            {"op": "setSidebarVisibility", "tab": "library.recentlyAdded", "visibility": "hidden"}]}
            """), to: custom, index: index)
        let after = Layout(customization: hidden, index: index, sizeClass: .regular)
        #expect(after.selectionFallback == [
                .init(hidden: "listenNow", select: "radio"), .init(hidden: "browse", select: "radio"),
                .init(hidden: "library.recentlyAdded", select: "radio"),
        ])
        #expect(after.hidden == ["listenNow", "library.recentlyAdded"])
        let encoded = JSONWriter.string(after.json(appId: "a", userId: "u", customization: hidden))
        #expect(encoded.hasSuffix(#""selectionFallback":{"listenNow":"radio","browse":"radio","library.recentlyAdded":"radio"}}"#))
    }

    @Test("schema rules for stand-ins", arguments: [
        (#"{"items": [{"id": "a", "title": "A", "standIn": "b"}, {"id": "b", "title": "B"}]}"#, ["invalid-stand-in"]),
        (#"{"items": [{"id": "a", "title": "A", "hiddenIn": ["compact"], "standIn": "nope"}, {"id": "b", "title": "B"}]}"#, ["invalid-stand-in"]),
        (#"{"items": [{"id": "a", "title": "A", "hiddenIn": ["compact"], "standIn": "a"}]}"#, ["invalid-stand-in"]),
            (
                #"{"items": [{"id": "a", "title": "A", "hiddenIn": ["compact"], "standIn": "b"}, {"id": "b", "title": "B", "hiddenIn": ["compact"]}]}"#,
                ["invalid-stand-in"]
            ),
            (
                #"{"items": [{"id": "a", "title": "A"}, {"kind": "section", "id": "s", "title": "S", "hiddenIn": ["regular"], "standIn": "s.a", "tabs": [{"id": "s.a", "title": "SA"}]}]}"#,
                ["invalid-stand-in"]
            ),
            (
                #"{"items": [{"id": "a", "title": "A"}, {"kind": "section", "id": "s", "title": "S", "hiddenIn": ["regular"], "standIn": "s", "tabs": []}]}"#,
                ["invalid-stand-in"]
            ),
            (
                #"{"items": [{"id": "a", "title": "A", "hiddenIn": ["regular"]}, {"kind": "section", "id": "s", "title": "S", "hiddenIn": ["compact"], "standIn": "a", "tabs": []}]}"#,
                []
            ),
        (#"{"items": [{"id": "a", "title": "A", "standIn": 3}]}"#, ["invalid-type"]),
        (#"{"items": [{"id": "a", "title": "A"}], "customizablePlatforms": ["iOS", "watchOS"]}"#, ["invalid-value"]),
        (#"{"items": [{"kind": "section", "id": "s", "title": "S", "expanded": "no", "tabs": []}]}"#, ["invalid-type"]),
            (
                #"{"items": [{"kind": "section", "id": "s", "title": "S", "dynamicTabs": {"idPrefix": "p.", "customizationBehavior": {"sidebar": "fixed"}}, "tabs": []}]}"#,
                ["invalid-value"]
            ),
        (#"{"items": [{"kind": "section", "id": "s", "title": "S", "dynamicTabs": {"idPrefix": "p.", "order": 1}, "tabs": []}]}"#, ["unknown-field"]),
    ] as [(String, [String])])
    func schemaRules(text: String, codes: [String]) {
        #expect(refusalCodes { _ = try TabSchema.parse(try json(text)) } == codes)
    }

    @Test("002: the search tab's label is the system's; in regular it is pinned (toolbar), never in the sidebar")
    func searchLabel() throws {
        let index = try Seeds.index(Seeds.articleLabelledSearch)
        // The schema keeps what the app registered.
        let search = try #require(index.tab("search")?.tab)
        #expect(search.title == "Знайти" && search.systemImage == "binoculars")
        for sizeClass in SizeClass.allCases {
            let layout = Layout(customization: .empty, index: index, sizeClass: sizeClass)
            #expect(layout.pinned.map(\.title) == ["Search"])
            #expect(layout.pinned.map(\.systemImage) == ["magnifyingglass"])
            #expect(!layout.shownTabs.dropLast().contains { $0.id == "search" }, "only in pinned")
            let encoded = JSONWriter.string(layout.json(appId: "a", userId: "u", customization: .empty))
            #expect(
                encoded.contains(
                    #""pinned":[{"kind":"tab","id":"search","title":"Search","titleKey":"Search","systemImage":"magnifyingglass","role":"search"}]"#))
        }
        // 002's collections example gives the search tab no label at all.
        let unlabelled = Layout(customization: .empty, index: try Seeds.index(Seeds.articleCollections), sizeClass: .regular)
        #expect(unlabelled.pinned.map(\.title) == ["Search"])
    }

    @Test("a section may start collapsed; the user's choice wins either way")
    func expansion() throws {
        let index = try Seeds.index("""
            {"items": [{"id": "a", "title": "A"},
              {"kind": "section", "id": "open", "title": "Open", "tabs": [{"id": "o", "title": "O"}]},
              {"kind": "section", "id": "closed", "title": "Closed", "expanded": false, "tabs": [{"id": "c", "title": "C"}]}]}
            """)
        func expanded(_ custom: Customization) -> [Bool] {
            Layout(customization: custom, index: index, sizeClass: .regular).sidebar.compactMap { item in
                if case .section(let section) = item { return section.expanded }
                return nil
            }
        }
        #expect(expanded(.empty) == [true, false])
        let flipped = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setSectionExpanded", "section": "open", "expanded": false},
                            {"op": "setSectionExpanded", "section": "closed", "expanded": true}]}
            """), to: .empty, index: index)
        #expect(expanded(flipped) == [false, true])
        #expect(JSONWriter.string(index.schema.json()).contains(#""id":"closed","title":"Closed","customizationBehavior""#))
        #expect(JSONWriter.string(index.schema.json()).contains(#""expanded":false"#))
    }
}
