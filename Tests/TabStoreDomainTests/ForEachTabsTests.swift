import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// A `ForEach` directly in the `TabView` (docs/domain.md "A top-level ForEach"): the `forEach` schema item across schema versions, in PUT documents,
/// in the served schema, and at the schema's limits. Layouts are in `ExampleSchemaTests` and `LayoutGoldenTests`, rule
/// codes in `RuleCodeTests`.
@Suite("Top-level ForEach tabs")
struct ForEachTabsTests {
    /// v1: playlists between Home and Settings, reorderable in the sidebar (hideable in the bar, as `automatic` there).
    static let v1 = """
        {"items": [{"id": "home", "title": "Home"},
          {"kind": "forEach", "id": "playlists", "dynamicTabs": {"idPrefix": "pl.", "customizationBehavior": {"sidebar": "reorderable"}}},
          {"id": "settings", "title": "Settings"}]}
        """
    /// v2: the ForEach moves into a TabSection of the same id and prefix, which also gets a static tab.
    static let v2 = """
        {"items": [{"id": "home", "title": "Home"}, {"id": "settings", "title": "Settings"},
          {"kind": "section", "id": "playlists", "title": "Playlists", "tabs": [{"id": "all", "title": "All"}],
           "dynamicTabs": {"idPrefix": "pl.", "customizationBehavior": {"sidebar": "reorderable"}}}]}
        """
    /// v3: the ForEach as the app first shipped it, but its tabs as ForEach makes them (no longer movable).
    static let v3 = """
        {"items": [{"id": "home", "title": "Home"}, {"kind": "forEach", "id": "playlists", "dynamicTabs": {"idPrefix": "pl."}},
          {"id": "settings", "title": "Settings"}]}
        """
    /// v4: the group is gone; v5: a static section took its id.
    static let v4 = #"{"items": [{"id": "home", "title": "Home"}, {"id": "settings", "title": "Settings"}]}"#
    static let v5 = """
        {"items": [{"id": "home", "title": "Home"}, {"kind": "section", "id": "playlists", "title": "P", "tabs": [{"id": "pl.fixed", "title": "F"}]}]}
        """

    func start() throws -> Customization {
        try CustomizationEditor.apply(try ops("""
            {"operations": [
              {"op": "setDynamicTabs", "section": "playlists", "tabs": [{"id": "pl.a", "title": "A"}, {"id": "pl.b", "title": "B"}, {"id": "pl.c", "title": "C"}]},
              {"op": "moveTab", "section": "playlists", "tab": "pl.c", "toIndex": 0},
              {"op": "setTabBarVisibility", "tab": "pl.b", "visibility": "hidden"}]}
            """), to: .empty, index: try Seeds.index(Self.v1, version: 1))
    }

    @Test("a ForEach that becomes a section keeps the person's list and order; back to a ForEach, the section's expansion goes")
    func becomesSection() throws {
        let c1 = try start()
        #expect(c1.sections["playlists"]?.tabOrder == ["pl.c", "pl.a", "pl.b"])
        let i2 = try Seeds.index(Self.v2, version: 2)
        let c2 = Reconciler.reconcile(c1, with: i2)
        #expect(c2.dynamicTabs == c1.dynamicTabs && c2.tabs == c1.tabs)
        #expect(c2.sections["playlists"]?.tabOrder == ["pl.c", "pl.a", "pl.b", "all"])
        let regular = Layout(customization: c2, index: i2, sizeClass: .regular)
        guard case .section(let section) = regular.sidebar.last else { Issue.record("no section"); return }
        #expect(section.tabs.map(\.id) == ["pl.c", "pl.a", "pl.b", "all"])
        // On iPhone the playlists were bar tabs; in a section they go to More.
        #expect(Layout(customization: c2, index: i2, sizeClass: .compact).more.map(\.id) == ["pl.c", "pl.a", "all"])
        var impact = Reconciler.Impact()
        impact.add(c1, newIndex: i2)
        // Only `all` joins the order's end: the person's list and order stay, so nothing they chose changes.
        #expect(impact.customizationsAffected == 0 && impact.dynamicTabsDropped == 0 && impact.droppedIds.isEmpty)

        // Collapsed as a section, then a ForEach again (its tabs no longer movable): no header to collapse, list order.
        let collapsed = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setSectionExpanded", "section": "playlists", "expanded": false}]}
            """), to: c2, index: i2)
        let i3 = try Seeds.index(Self.v3, version: 3)
        let c3 = Reconciler.reconcile(collapsed, with: i3)
        #expect(c3.sections["playlists"] == .init(tabOrder: ["pl.a", "pl.b", "pl.c"]))
        #expect(c3.tabs == c1.tabs && c3.dynamicTabs == c1.dynamicTabs)
        #expect(Reconciler.reconcile(c3, with: i3) == c3)
        #expect(Layout(customization: c3, index: i3, sizeClass: .compact).tabBar.map(\.id) == ["home", "pl.a", "pl.c", "settings"])
    }

    @Test("a ForEach that disappears, or whose id a static section takes, drops the list and every choice about its tabs",
          arguments: [v4, v5])
    func disappears(schema: String) throws {
        let c1 = try start()
        let index = try Seeds.index(schema, version: 2)
        let reconciled = Reconciler.reconcile(c1, with: index)
        #expect(reconciled.dynamicTabs.isEmpty && reconciled.tabs.isEmpty)
        #expect(reconciled.referencedIds.isDisjoint(with: ["pl.a", "pl.b", "pl.c"]))
        var impact = Reconciler.Impact()
        impact.add(c1, newIndex: index)
        #expect(impact.customizationsAffected == 1)
        #expect(impact.dynamicTabsDropped == 3)
        #expect(impact.droppedIds.isSuperset(of: ["pl.a", "pl.b", "pl.c"]))
    }

    @Test("PUT: the lists and orders of a ForEach like a section's; an expansion is refused where it was made")
    func put() throws {
        let index = try Seeds.index(Self.v1)
        let (document, _) = try Customization.decode(try json("""
            {"dynamicTabs": {"playlists": [{"id": "pl.a", "title": "A"}, {"id": "pl.b", "title": "B"}]},
             "sections": {"playlists": {"tabOrder": ["pl.b", "pl.a"]}}, "tabs": {"pl.a": {"tabBarVisibility": "hidden"}}}
            """))
        let accepted = try CustomizationEditor.replace(with: document, index: index)
        #expect(accepted.sections["playlists"]?.tabOrder == ["pl.b", "pl.a"])
        #expect(Layout(customization: accepted, index: index, sizeClass: .compact).tabBar.map(\.id) == ["home", "pl.b", "settings"])
        let (expanded, _) = try Customization.decode(try json("""
            {"dynamicTabs": {"playlists": []}, "sections": {"playlists": {"expanded": true}}}
            """))
        let found = violations { _ = try CustomizationEditor.replace(with: expanded, index: index) }
        #expect(found.map(\.code) == [.customizationDisabled])
        #expect(found.map(\.pointer) == ["/sections/playlists/expanded"])
        #expect(found.first?.detail == "forEach \"playlists\" has no header (its tabs are top-level tabs) and cannot be expanded or collapsed")
    }

    @Test("the served schema writes a ForEach out without a title, tabs, behavior or expansion, and registers as the same")
    func served() throws {
        let index = try Seeds.index(Seeds.articleForEach)
        let served = JSONWriter.string(index.schema.json())
        #expect(served.contains(#"{"kind":"forEach","id":"playlists","defaultVisibility":{"sidebar":"automatic","tabBar":"automatic"},"#
            + #""dynamicTabs":{"idPrefix":"playlist.","customizationBehavior":{"sidebar":"automatic","tabBar":"automatic"}}}"#))
        #expect(try TabSchema.parse(try json(served)) == index.schema)
        // A ForEach's default visibility applies to its tabs (a modifier on the ForEach's Tab), like a section's.
        let outOfBar = try Seeds.index(Seeds.articleForEach.replacingOccurrences(
            of: #""id": "playlists","#, with: #""id": "playlists", "defaultVisibility": {"tabBar": "hidden"},"#))
        let stored = try CustomizationEditor.apply(try ops(#"{"operations": [\#(Seeds.articlePlaylists)]}"#), to: .empty, index: outOfBar)
        let regular = Layout(customization: stored, index: outOfBar, sizeClass: .regular)
        #expect(regular.sidebar.count == 6)
        #expect(regular.tabBar.map(\.id) == ["home", "library", "settings"])
    }

    @Test("limits: a ForEach counts as one item of the 500; its list holds at most 500 tabs")
    func limits() throws {
        let group = #"{"kind": "forEach", "id": "f", "dynamicTabs": {"idPrefix": "p."}}"#
        let tabs = { (count: Int) in (0..<count).map { #"{"id": "t\#($0)", "title": "T"}"# }.joined(separator: ",") }
        #expect(refusalCodes { _ = try TabSchema.parse(try json(#"{"items": [\#(tabs(499)), \#(group)]}"#)) } == [])
        #expect(refusalCodes { _ = try TabSchema.parse(try json(#"{"items": [\#(tabs(500)), \#(group)]}"#)) } == ["too-many-items"])
        let index = try Seeds.index(#"{"items": [\#(group)]}"#)
        let list = { (count: Int) in (0..<count).map { Customization.DynamicTab(id: Identifier("p.\($0)"), title: "P") } }
        #expect(refusalCodes { _ = try CustomizationEditor.apply([.setDynamicTabs(section: "f", tabs: list(500))], to: .empty, index: index) } == [])
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply([.setDynamicTabs(section: "f", tabs: list(501))], to: .empty, index: index)
        } == ["too-many-entries"])
    }
}
