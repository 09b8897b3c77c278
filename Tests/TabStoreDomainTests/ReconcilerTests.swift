import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Reconciliation across schema versions")
struct ReconcilerTests {
    static let v1 = SchemaFixtures.v1
    /// v2 drops `old` and `s.b`, adds `s.d` and a new top-level `fresh`.
    static let v2 = SchemaFixtures.v2
    /// v3 makes `news` reorderable (no longer hideable) and removes section `s` entirely.
    static let v3 = """
        {"items": [
          {"id": "home", "title": "Home"}, {"id": "news", "title": "News", "customizationBehavior": {"sidebar": "reorderable"}},
          {"id": "fresh", "title": "Fresh"}, {"id": "later", "title": "Later"}
        ]}
        """

    func start() throws -> Customization {
        try CustomizationEditor.apply(try ops("""
            {"operations": [
              {"op": "setSidebarVisibility", "tab": "old", "visibility": "hidden"},
              {"op": "setSidebarVisibility", "tab": "news", "visibility": "hidden"},
              {"op": "setTabOrder", "section": "s", "tabOrder": ["s.c", "s.b", "s.a"]},
              {"op": "setTabBarOrder", "tabBarOrder": ["s.a", "home"]}]}
            """), to: .empty, index: try Seeds.index(Self.v1, version: 1))
    }

    @Test("v1 → v2 → v3: gone ids pruned, new tabs appended, invalid choices dropped, idempotent")
    func threeVersions() throws {
        let c1 = try start()
        #expect(c1.tabBarOrder == ["s.a", "home", "s.b", "s.c"])
        let i2 = try Seeds.index(Self.v2, version: 2)
        let c2 = Reconciler.reconcile(c1, with: i2)
        #expect(c2.schemaVersion == 2)
        #expect(c2.tabs["old"] == nil)
        #expect(c2.tabs["news"]?.sidebarVisibility == .hidden)
        #expect(c2.sections["s"]?.tabOrder == ["s.c", "s.a", "s.d"])
        #expect(c2.tabBarOrder == ["s.a", "home", "s.c", "fresh", "s.d"])
        #expect(Reconciler.reconcile(c2, with: i2) == c2)

        let i3 = try Seeds.index(Self.v3, version: 3)
        let c3 = Reconciler.reconcile(c2, with: i3)
        #expect(c3.tabs.isEmpty)  // news can no longer be hidden
        #expect(c3.sections.isEmpty)
        #expect(c3.tabBarOrder == ["home", "fresh", "news", "later"])
        #expect(Reconciler.reconcile(c3, with: i3) == c3)

        // Layout with the reconciled value follows the new schema.
        let layout = Layout(customization: c3, index: i3, sizeClass: .regular)
        #expect(layout.hidden.isEmpty)
        #expect(layout.tabBar.map(\.id) == ["home", "fresh", "news", "later"])
    }

    @Test("impact report counts what a new version would change")
    func impact() throws {
        let i2 = try Seeds.index(Self.v2, version: 2)
        var impact = Reconciler.Impact()
        impact.add(try start(), newIndex: i2)
        impact.add(.empty, newIndex: i2)
        let untouched = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setSidebarVisibility", "tab": "home", "visibility": "hidden"}]}
            """), to: .empty, index: try Seeds.index(Self.v1, version: 1))
        impact.add(untouched, newIndex: i2)
        #expect(impact.customizationsChecked == 3)
        #expect(impact.customizationsAffected == 1)
        // `s.b` left only an order (the rest of it keeps its relative order): no choice about it is lost.
        #expect(impact.droppedIds == ["old"])
    }

    @Test("one user's impact: dropped choices, reset visibility, orders changed only when the kept tabs move")
    func userImpact() throws {
        let i1 = try Seeds.index(Self.v1, version: 1), i2 = try Seeds.index(Self.v2, version: 2), i3 = try Seeds.index(Self.v3, version: 3)
        let served = try start()
        let to2 = UserImpact(served: served, reconciled: Reconciler.reconcile(served, with: i2), newIndex: i2)
        #expect(to2.droppedIds == ["old"] && to2.visibilityReset.isEmpty && to2.ordersChanged.isEmpty && !to2.tabBarOrderChanged)
        let c2 = Reconciler.reconcile(served, with: i2)
        // v3: news no longer hideable (reset), section s gone (dropped, its order with it), the tab bar loses s.a.
        let to3 = UserImpact(served: c2, reconciled: Reconciler.reconcile(c2, with: i3), newIndex: i3)
        #expect(to3.visibilityReset == ["news"] && to3.droppedIds.contains("s") && !to3.tabBarOrderChanged, "\(to3)")
        // The same version again changes nothing.
        #expect(UserImpact(served: c2, reconciled: Reconciler.reconcile(c2, with: i2), newIndex: i2).isEmpty)
        #expect(UserImpact.orderChanged(["a", "b", "c"], ["a", "c", "d"]) == false)
        #expect(UserImpact.orderChanged(["a", "b", "c"], ["c", "a"]) == true)
        #expect(UserImpact.orderChanged(["a", "b"], nil) == true)
        _ = i1
    }

    /// Data-driven tabs across versions: `lists` is reorderable, `gone` has a list, `plain` is static.
    static let d1 = """
        {"items": [{"id": "home", "title": "Home"},
          {"kind": "section", "id": "lists", "title": "Lists",
           "dynamicTabs": {"idPrefix": "list.", "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}}, "tabs": []},
          {"kind": "section", "id": "gone", "title": "Gone", "dynamicTabs": {"idPrefix": "gone."}, "tabs": []}]}
        """
    /// v2: `lists` keeps its prefix but its tabs may no longer move (ForEach's default); `gone` is static now.
    static let d2 = """
        {"items": [{"id": "home", "title": "Home"},
          {"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "list."}, "tabs": [{"id": "all", "title": "All"}]},
          {"kind": "section", "id": "gone", "title": "Gone", "tabs": []}]}
        """
    /// v3: `lists` takes a narrower prefix, so only `list.x.…` ids stay its tabs.
    static let d3 = """
        {"items": [{"id": "home", "title": "Home"},
          {"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "list.x."}, "tabs": []}]}
        """

    func dynamicStart() throws -> Customization {
        try CustomizationEditor.apply(try ops("""
            {"operations": [
              {"op": "setDynamicTabs", "section": "lists", "tabs": [{"id": "list.a", "title": "A"}, {"id": "list.x.b", "title": "B"}, {"id": "list.c", "title": "C"}]},
              {"op": "setDynamicTabs", "section": "gone", "tabs": [{"id": "gone.a", "title": "GA"}]},
              {"op": "setSidebarVisibility", "tab": "gone.a", "visibility": "hidden"},
              {"op": "setTabOrder", "section": "lists", "tabOrder": ["list.c", "list.x.b", "list.a"]},
              {"op": "setTabBarOrder", "tabBarOrder": ["list.c", "home"]}]}
            """), to: .empty, index: try Seeds.index(Self.d1, version: 1))
    }

    @Test("data-driven tabs: lists kept where their section still is, orders back to default when tabs may no longer move, prefixes narrowed")
    func dynamicVersions() throws {
        let c1 = try dynamicStart()
        let i2 = try Seeds.index(Self.d2, version: 2)
        let c2 = Reconciler.reconcile(c1, with: i2)
        #expect(c2.dynamicTabs.keys.sorted() == ["lists"])
        #expect(c2.dynamicTabs["lists"]?.tabs.map(\.id) == ["list.a", "list.x.b", "list.c"])
        #expect(c2.tabs.isEmpty)
        // The static tab leads, then the list in the app's order: none of it may move any more.
        #expect(c2.sections["lists"]?.tabOrder == ["all", "list.a", "list.x.b", "list.c"])
        #expect(c2.tabBarOrder == ["home", "all"])
        #expect(Reconciler.reconcile(c2, with: i2) == c2)
        let c3 = Reconciler.reconcile(c2, with: try Seeds.index(Self.d3, version: 3))
        #expect(c3.dynamicTabs["lists"]?.tabs.map(\.id) == ["list.x.b"])
        #expect(c3.sections["lists"]?.tabOrder == ["list.x.b"])

        var impact = Reconciler.Impact()
        impact.add(c1, newIndex: try Seeds.index(Self.d3, version: 3))
        #expect(impact.customizationsAffected == 1)
        #expect(impact.dynamicTabsDropped == 3)
        #expect(impact.droppedIds == ["gone", "gone.a", "list.a", "list.c"])
    }
}
