import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// Every kind of tab the rules tell apart: disabled, reorderable, fixed in one placement only, default-hidden,
/// sidebarOnly, pinned, a tab whose own behavior differs from its section's, sections that are disabled, default-hidden in the bar,
/// reorderable, and dynamic.
let rulesSchema = """
    {"items": [
      {"id": "home", "title": "Home", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
      {"id": "feed", "title": "Feed", "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}},
      {"id": "inbox", "title": "Inbox"},
      {"id": "dock", "title": "Dock", "customizationBehavior": {"tabBar": "disabled"}},
      {"id": "extra", "title": "Extra", "customizationBehavior": {"tabBar": "reorderable"}, "defaultVisibility": {"tabBar": "hidden"}},
      {"id": "optional", "title": "Optional", "defaultVisibility": {"sidebar": "hidden", "tabBar": "hidden"}},
      {"id": "settings", "title": "Settings", "placement": "sidebarOnly"},
      {"id": "search", "title": "Search", "role": "search"},
      {"kind": "section", "id": "places", "title": "Places", "tabs": [
        {"id": "places.a", "title": "A"}, {"id": "places.b", "title": "B", "customizationBehavior": {"sidebar": "disabled"}},
        {"id": "places.c", "title": "C"}]},
      {"kind": "section", "id": "locked", "title": "Locked", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}, "tabs": [
        {"id": "locked.a", "title": "LA"}, {"id": "locked.b", "title": "LB", "customizationBehavior": {"sidebar": "reorderable"}}]},
      {"kind": "section", "id": "quiet", "title": "Quiet", "defaultVisibility": {"tabBar": "hidden"}, "tabs": [
        {"id": "quiet.a", "title": "QA"}, {"id": "quiet.b", "title": "QB", "defaultVisibility": {"tabBar": "visible"}}]},
      {"kind": "section", "id": "reord", "title": "Reord", "customizationBehavior": {"sidebar": "reorderable"}, "tabs": [
        {"id": "reord.a", "title": "RA"}]},
      {"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "list."}, "tabs": []},
      {"kind": "section", "id": "mixes", "title": "Mixes", "dynamicTabs": {"idPrefix": "mix.",
       "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}}, "tabs": []}
    ]}
    """

@Suite("CustomizationRules: one answer per schema × customization question")
struct CustomizationRulesTests {
    static func rules() throws -> CustomizationRules { CustomizationRules(try Seeds.index(rulesSchema)) }

    static func info(_ id: Identifier, _ rules: CustomizationRules) throws -> SchemaIndex.TabInfo { try #require(rules.index.tab(id)) }

    static func section(_ id: Identifier, _ rules: CustomizationRules) throws -> SchemaSection { try #require(rules.index.section(id)) }

    struct VisibilityRow: Sendable, CustomStringConvertible {
        let tab: Identifier
        let placement: Placement
        var entry = Customization.TabEntry()
        let behavior: CustomizationBehavior
        let byDefault: Bool
        let visible: Bool
        /// Whether the tab may move; nil: as its behavior says (not `disabled`).
        var movable: Bool?
        var description: String { "\(tab) in \(placement.rawValue) with \(entry.sidebarVisibility.rawValue)/\(entry.tabBarVisibility.rawValue)" }
    }

    static let visibilityRows: [VisibilityRow] = [
        .init(tab: "home", placement: .sidebar, behavior: .disabled, byDefault: true, visible: true),
        .init(tab: "feed", placement: .tabBar, behavior: .reorderable, byDefault: true, visible: true),
        .init(tab: "dock", placement: .tabBar, behavior: .disabled, byDefault: true, visible: true),
        .init(tab: "dock", placement: .sidebar, behavior: .automatic, byDefault: true, visible: true),
        .init(tab: "inbox", placement: .sidebar, entry: .init(sidebarVisibility: .hidden), behavior: .automatic, byDefault: true, visible: false),
        // Apple's coupling: hidden in the sidebar is hidden in the bar; not the other way round.
        .init(
            tab: "inbox", placement: .tabBar, entry: .init(sidebarVisibility: .hidden, tabBarVisibility: .visible), behavior: .automatic,
            byDefault: true, visible: false),
        .init(tab: "inbox", placement: .sidebar, entry: .init(tabBarVisibility: .hidden), behavior: .automatic, byDefault: true, visible: true),
        .init(tab: "extra", placement: .tabBar, behavior: .reorderable, byDefault: false, visible: false),
        .init(tab: "extra", placement: .tabBar, entry: .init(tabBarVisibility: .visible), behavior: .reorderable, byDefault: false, visible: true),
        .init(tab: "optional", placement: .sidebar, behavior: .automatic, byDefault: false, visible: false),
        .init(tab: "optional", placement: .sidebar, entry: .init(sidebarVisibility: .visible), behavior: .automatic, byDefault: false, visible: true),
        .init(tab: "settings", placement: .sidebar, behavior: .automatic, byDefault: true, visible: true),
        .init(tab: "settings", placement: .tabBar, entry: .init(tabBarVisibility: .visible), behavior: .automatic, byDefault: false, visible: false),
        .init(tab: "search", placement: .sidebar, behavior: .automatic, byDefault: true, visible: true),
        // A section's `disabled` governs its tabs; elsewhere each tab's own behavior counts.
        .init(tab: "places.b", placement: .sidebar, behavior: .disabled, byDefault: true, visible: true),
        .init(tab: "places.b", placement: .tabBar, behavior: .automatic, byDefault: true, visible: true),
        .init(tab: "locked.b", placement: .sidebar, behavior: .disabled, byDefault: true, visible: true),
        .init(tab: "locked.a", placement: .tabBar, behavior: .disabled, byDefault: true, visible: true),
        .init(tab: "reord.a", placement: .sidebar, behavior: .automatic, byDefault: true, visible: true),
        // A section's default visibility applies to its tabs unless a tab sets its own.
        .init(tab: "quiet.a", placement: .tabBar, behavior: .automatic, byDefault: false, visible: false),
        .init(tab: "quiet.a", placement: .sidebar, behavior: .automatic, byDefault: true, visible: true),
        .init(tab: "quiet.b", placement: .tabBar, behavior: .automatic, byDefault: true, visible: true),
        .init(tab: "quiet.b", placement: .tabBar, entry: .init(tabBarVisibility: .hidden), behavior: .automatic, byDefault: true, visible: false),
        // As in SwiftUI, a data-driven (ForEach) tab cannot be dragged by default, `reorderable` turns dragging on.
        .init(tab: "list.mine", placement: .sidebar, behavior: .automatic, byDefault: true, visible: true, movable: false),
        .init(tab: "list.mine", placement: .tabBar, behavior: .automatic, byDefault: true, visible: true, movable: false),
        .init(tab: "mix.a", placement: .sidebar, behavior: .reorderable, byDefault: true, visible: true, movable: true),
        .init(tab: "mix.a", placement: .tabBar, behavior: .reorderable, byDefault: true, visible: true, movable: true),
    ]

    @Test("behavior, default visibility and visibility", arguments: visibilityRows)
    func visibility(row: VisibilityRow) throws {
        let rules = try Self.rules()
        let info = try Self.info(row.tab, rules)
        #expect(rules.behavior(of: info, in: row.placement) == row.behavior)
        #expect(rules.canMove(info, in: row.placement) == (row.movable ?? (row.behavior != .disabled)))
        #expect(rules.canHide(info, in: row.placement) == (row.behavior == .automatic))
        #expect(rules.isVisibleByDefault(info, in: row.placement) == row.byDefault)
        #expect(rules.isVisible(info, in: row.placement, customization: Customization(tabs: [row.tab: row.entry])) == row.visible)
    }

    @Test("which visibility choices may stand", arguments: [
        ("home", Placement.sidebar, Visibility.hidden, ViolationCode.notHideable),
        ("home", .sidebar, .visible, nil), ("home", .tabBar, .automatic, nil),
        ("feed", .tabBar, .hidden, .notHideable), ("feed", .tabBar, .visible, nil),
        ("extra", .tabBar, .visible, .customizationDisabled), ("extra", .tabBar, .hidden, .notHideable),
        ("optional", .sidebar, .visible, nil), ("optional", .tabBar, .visible, nil), ("inbox", .sidebar, .hidden, nil),
        ("settings", .tabBar, .visible, .sidebarOnly), ("settings", .tabBar, .hidden, nil), ("settings", .sidebar, .hidden, nil),
        ("places.b", .sidebar, .hidden, .notHideable), ("places.b", .tabBar, .hidden, nil),
        ("locked.a", .sidebar, .hidden, .notHideable), ("locked.b", .tabBar, .visible, nil),
        ("reord.a", .sidebar, .hidden, nil), ("quiet.a", .tabBar, .visible, nil), ("list.mine", .sidebar, .hidden, nil),
        ("mix.a", .sidebar, .hidden, .notHideable), ("mix.a", .tabBar, .visible, nil),
    ] as [(Identifier, Placement, Visibility, ViolationCode?)])
    func visibilityChoice(tab: Identifier, placement: Placement, visibility: Visibility, code: ViolationCode?) throws {
        let rules = try Self.rules()
        #expect(rules.refusal(of: visibility, for: try Self.info(tab, rules), in: placement)?.code == code)
    }

    @Test("which tabs a tab bar order may list", arguments: [
        ("home", ViolationCode.notMovable), ("dock", .notMovable), ("search", .pinnedTab), ("settings", .sidebarOnly), ("locked.a", .notMovable),
        ("feed", nil), ("inbox", nil), ("extra", nil), ("places.b", nil), ("list.mine", .notMovable), ("mix.a", nil),
    ] as [(Identifier, ViolationCode?)])
    func tabBarOrderChoice(tab: Identifier, code: ViolationCode?) throws {
        let rules = try Self.rules()
        #expect(rules.tabBarOrderRefusal(of: try Self.info(tab, rules))?.code == code)
    }

    @Test("which sections may be reordered, which tabs moved, and where", arguments: [
        ("places", "places.a", nil, nil, ["places.b": 1]),
        ("places", "places.b", nil, ViolationCode.notMovable, ["places.b": 1]),
        ("places", "inbox", ViolationCode.crossSectionMove, nil, ["places.b": 1]),
        ("places", "list.mine", .crossSectionMove, .notMovable, ["places.b": 1]),
        ("locked", "locked.b", nil, .notMovable, ["locked.a": 0, "locked.b": 1]),
        ("reord", "reord.a", nil, nil, [:]),
        ("lists", "list.mine", nil, .notMovable, [:]),
        ("mixes", "mix.a", nil, nil, [:]),
    ] as [(Identifier, Identifier, ViolationCode?, ViolationCode?, [Identifier: Int])])
    func sectionChoices(section: Identifier, tab: Identifier, membership: ViolationCode?, move: ViolationCode?, fixed: [Identifier: Int]) throws {
        let rules = try Self.rules()
        let schemaSection = try Self.section(section, rules)
        let info = try Self.info(tab, rules)
        #expect(rules.membershipRefusal(of: info, in: schemaSection)?.code == membership)
        #expect(rules.moveRefusal(of: info)?.code == move)
        #expect(rules.fixedPositions(of: schemaSection, in: .empty) == fixed)
        #expect((rules.reorderRefusal(of: schemaSection)?.code == .customizationDisabled) == (section == "locked"))
        #expect(rules.canReorder(schemaSection) == (section != "locked"))
    }

    @Test("an order keeps fixed tabs at their builder index; the first displaced one in builder order is named")
    func fixedPositionsInAnOrder() throws {
        let rules = try Self.rules()
        let places = try Self.section("places", rules)
        #expect(rules.fixedPositionRefusal(of: ["places.c", "places.b", "places.a"], in: places, customization: .empty) == nil)
        #expect(rules.fixedPositionRefusal(of: ["places.b", "places.a", "places.c"], in: places, customization: .empty)
                == .init(
                    code: .notMovable,
                    detail: "tab \"places.b\" has customization behavior \"disabled\" in the sidebar and keeps its builder position 1"))
        let locked = try Self.section("locked", rules)
        #expect(
            rules.fixedPositionRefusal(of: ["locked.b", "locked.a"], in: locked, customization: .empty)?.detail.hasPrefix("tab \"locked.a\"") == true)
        #expect(rules.order(of: places, in: .empty) == ["places.a", "places.b", "places.c"])
        let custom = Customization(sections: ["places": .init(tabOrder: ["places.c", "places.b", "places.a"])])
        #expect(rules.order(of: places, in: custom) == ["places.c", "places.b", "places.a"])
    }

    @Test("fixed items of a default list, and placing the rest around them")
    func placing() throws {
        let rules = try Self.rules()
        let bar = try ["home", "places.b", "dock", "inbox", "locked.a"].map { try Self.info($0, rules) }
        #expect(rules.fixedPositions(of: bar, in: .tabBar) == ["home": 0, "dock": 2, "locked.a": 4])
        #expect(rules.fixedPositions(of: bar, in: .sidebar) == ["home": 0, "places.b": 1, "locked.a": 4])
        #expect(CustomizationRules.placing(["b": 1], in: ["c", "a", "b"]) == ["c", "b", "a"])
        #expect(CustomizationRules.placing(["b": 1, "d": 3], in: ["d", "c", "b", "a"]) == ["c", "b", "a", "d"])
        #expect(CustomizationRules.placing(["x": 0], in: ["a", "b"]) == ["a", "b"])
        #expect(CustomizationRules.placing([:], in: ["b", "a"]) == ["b", "a"])
    }

    @Test("the layout's customized bar keeps the tabs fixed in the tab bar in place, and moves those fixed only in the sidebar")
    func layoutBarOrder() throws {
        let rules = try Self.rules()
        let custom = Customization(tabBarOrder: ["places.b", "inbox", "feed"])
        let layout = Layout(customization: custom, index: rules.index, sizeClass: .regular)
        #expect(
            layout.tabBar.map(\.id) == [
                "home", "places.b", "inbox", "dock", "feed", "places.a", "places.c", "locked.a", "locked.b", "quiet.b", "reord.a",
            ])
        #expect(layout.pinned.map(\.id) == ["search"])
    }

    @Test("a change may not leave a placement that showed a tab with none")
    func noVisibleTab() throws {
        let rules = CustomizationRules(try Seeds.index(#"{"items": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}"#))
        let sidebarGone = Customization(tabs: ["a": .init(sidebarVisibility: .hidden), "b": .init(sidebarVisibility: .hidden)])
        let barGone = Customization(tabs: ["a": .init(tabBarVisibility: .hidden), "b": .init(tabBarVisibility: .hidden)])
        #expect(rules.visibleCounts(.empty) == PerPlacement(sidebar: 2, tabBar: 2))
        #expect(rules.visibleCounts(sidebarGone) == PerPlacement(sidebar: 0, tabBar: 0))
        #expect(rules.visibleCounts(barGone) == PerPlacement(sidebar: 2, tabBar: 0))
        #expect(rules.noVisibleTabRefusal(from: .empty, to: sidebarGone)
            == .init(code: .noVisibleTab, detail: "the change would leave no visible tab in the sidebar"))
        #expect(rules.noVisibleTabRefusal(from: .empty, to: barGone)?.detail == "the change would leave no visible tab in the tabBar")
        // Nothing was visible before: the change takes nothing away.
        #expect(rules.noVisibleTabRefusal(from: barGone, to: barGone) == nil)
        #expect(rules.noVisibleTabRefusal(from: sidebarGone, to: .empty) == nil)
    }

    @Test("normalizing keeps a customized tab bar order to what may be listed and adds what the bar shows")
    func normalize() throws {
        let rules = try Self.rules()
        var custom = Customization(tabs: ["inbox": .init(), "quiet.a": .init(tabBarVisibility: .visible)],
                                   tabBarOrder: ["search", "home", "nope", "feed", "settings", "locked.a"])
        rules.normalize(&custom)
        #expect(custom.tabs == ["quiet.a": .init(tabBarVisibility: .visible)])
        #expect(custom.tabBarOrder == ["feed", "inbox", "places.a", "places.b", "places.c", "quiet.a", "quiet.b", "reord.a"])
        var untouched = Customization(tabs: ["inbox": .init(sidebarVisibility: .hidden)])
        rules.normalize(&untouched)
        #expect(untouched.tabBarOrder == nil)
    }

    @Test("which tabs a customization can name: data-driven ids by prefix until a list is stored, then the list's")
    func dataDrivenLookups() throws {
        let rules = try Self.rules()
        let lists = try Self.section("lists", rules)
        #expect(rules.tab("list.any", in: .empty)?.tab.title == "any")
        #expect(rules.tab("list.", in: .empty) == nil)
        let stored = Customization(dynamicTabs: ["lists": [.init(id: "list.b", title: "B", image: "b"), .init(id: "list.a", title: "A")],
                                                 "mixes": [.init(id: "mix.a", title: "MA")]])
        #expect(rules.tab("list.any", in: stored) == nil)
        #expect(rules.tab("list.b", in: stored)?.tab.image == "b")
        #expect(rules.tab("list.b", in: stored)?.isDynamic == true)
        #expect(rules.tab("home", in: stored)?.isDynamic == false)
        #expect(rules.defaultTabs(of: lists, in: stored).map(\.tab.id) == ["list.b", "list.a"])
        #expect(rules.fixedPositions(of: lists, in: stored) == ["list.b": 0, "list.a": 1])
        #expect(rules.fixedPositions(of: try Self.section("mixes", rules), in: stored) == [:])
        // A stored order is repaired against the list: unlisted ids leave, listed ones join, fixed ones return.
        #expect(rules.repairedOrder(["list.a", "list.gone"], of: lists, in: stored) == ["list.b", "list.a"])
        #expect(rules.repairedOrder(["mix.z", "mix.a"], of: try Self.section("mixes", rules), in: stored) == ["mix.a"])
        #expect(rules.repairedOrder(["mix.z", "mix.a"], of: try Self.section("mixes", rules), in: .empty) == ["mix.z", "mix.a"])
        #expect(rules.repairedOrder(["list.z"], of: lists, in: .empty) == [])
        var pruned = Customization(tabs: ["list.gone": .init(sidebarVisibility: .hidden), "list.a": .init(sidebarVisibility: .hidden)],
                                   dynamicTabs: ["lists": [.init(id: "list.a", title: "A"), .init(id: "mix.a", title: "M")], "places": []])
        rules.pruneDynamicTabs(&pruned)
        #expect(pruned.tabs.keys.sorted() == ["list.a"])
        #expect(pruned.dynamicTabs.keys.sorted() == ["lists"])
        #expect(pruned.dynamicTabs["lists"]?.tabs.map(\.id) == ["list.a"])
    }
}
