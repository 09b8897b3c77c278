import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport


@Suite("Customization rules, one row per rule code")
struct RuleCodeTests {
    struct Row: Sendable, CustomStringConvertible {
        let name: String
        let operations: String
        let code: String?
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "hide an automatic tab", operations: #"{"op":"setSidebarVisibility","tab":"inbox","visibility":"hidden"}"#, code: nil),
        Row(name: "unknown tab", operations: #"{"op":"setSidebarVisibility","tab":"nope","visibility":"hidden"}"#, code: "unknown-tab"),
        Row(name: "unknown section", operations: #"{"op":"resetSectionOrder","section":"nope"}"#, code: "unknown-section"),
        Row(name: "unknown section in move", operations: #"{"op":"moveTab","section":"nope","tab":"places.a","toIndex":0}"#, code: "unknown-section"),
        Row(name: "hide a disabled tab", operations: #"{"op":"setSidebarVisibility","tab":"home","visibility":"hidden"}"#, code: "not-hideable"),
        Row(name: "hide a reorderable tab", operations: #"{"op":"setTabBarVisibility","tab":"feed","visibility":"hidden"}"#, code: "not-hideable"),
        Row(
            name: "move a disabled tab in its section", operations: #"{"op":"moveTab","section":"places","tab":"places.b","toIndex":0}"#,
            code: "not-movable"),
        Row(
            name: "tab order moving a disabled tab",
            operations: #"{"op":"setTabOrder","section":"places","tabOrder":["places.b","places.a","places.c"]}"#, code: "not-movable"),
        Row(
            name: "tab order keeping a disabled tab",
            operations: #"{"op":"setTabOrder","section":"places","tabOrder":["places.c","places.b","places.a"]}"#, code: nil),
        Row(
            name: "move into another section", operations: #"{"op":"moveTab","section":"places","tab":"locked.a","toIndex":0}"#,
            code: "cross-section-move"),
        Row(
            name: "tab order naming another section's tab",
            operations: #"{"op":"setTabOrder","section":"places","tabOrder":["places.a","places.b","places.c","inbox"]}"#, code: "cross-section-move"),
        Row(
            name: "tab order missing a tab", operations: #"{"op":"setTabOrder","section":"places","tabOrder":["places.a","places.b"]}"#,
            code: "invalid-tab-order"),
        Row(
            name: "tab order with a duplicate",
            operations: #"{"op":"setTabOrder","section":"places","tabOrder":["places.a","places.b","places.c","places.a"]}"#,
            code: "invalid-tab-order"),
        Row(name: "move out of range", operations: #"{"op":"moveTab","section":"places","tab":"places.a","toIndex":9}"#, code: "invalid-tab-order"),
        Row(
            name: "reorder a disabled section", operations: #"{"op":"setTabOrder","section":"locked","tabOrder":["locked.b","locked.a"]}"#,
            code: "customization-disabled"),
        Row(
            name: "hide a tab of a disabled section", operations: #"{"op":"setSidebarVisibility","tab":"locked.a","visibility":"hidden"}"#,
            code: "not-hideable"),
        Row(
            name: "add a default-hidden tab that is not fully customizable",
            operations: #"{"op":"setTabBarVisibility","tab":"extra","visibility":"visible"}"#, code: "customization-disabled"),
        Row(
            name: "show a sidebarOnly tab in the bar", operations: #"{"op":"setTabBarVisibility","tab":"settings","visibility":"visible"}"#,
            code: "sidebar-only"),
        Row(name: "sidebarOnly tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["settings"]}"#, code: "sidebar-only"),
        Row(name: "pinned tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["inbox","search"]}"#, code: "pinned-tab"),
        Row(name: "disabled tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["home"]}"#, code: "not-movable"),
        Row(name: "reorderable tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["inbox","feed"]}"#, code: nil),
        // v1.1: tabs built with ForEach cannot be dragged by default; `reorderable` turns dragging on.
        Row(
            name: "dynamic tab in its section", operations: #"{"op":"moveTab","section":"lists","tab":"list.groceries","toIndex":0}"#,
            code: "not-movable"),
        Row(name: "reorderable dynamic tab in its section", operations: #"{"op":"moveTab","section":"mixes","tab":"mix.a","toIndex":0}"#, code: nil),
        Row(
            name: "dynamic tab in another section", operations: #"{"op":"moveTab","section":"places","tab":"list.groceries","toIndex":0}"#,
            code: "cross-section-move"),
        // A ForEach directly in the TabView (docs/domain.md "A top-level ForEach"): its tabs are top-level tabs; the group reorders only its own.
        Row(name: "hide a top-level ForEach tab", operations: #"{"op":"setTabBarVisibility","tab":"pick.a","visibility":"hidden"}"#, code: nil),
        Row(name: "move a top-level ForEach tab", operations: #"{"op":"moveTab","section":"picks","tab":"pick.a","toIndex":0}"#, code: "not-movable"),
        Row(
            name: "a top-level ForEach tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["inbox","pick.a"]}"#,
            code: "not-movable"),
        Row(
            name: "hide a reorderable top-level ForEach tab", operations: #"{"op":"setSidebarVisibility","tab":"top.a","visibility":"hidden"}"#,
            code: "not-hideable"),
        Row(name: "move a reorderable top-level ForEach tab", operations: #"{"op":"moveTab","section":"tops","tab":"top.a","toIndex":0}"#, code: nil),
        Row(
            name: "a reorderable top-level ForEach tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["top.a","inbox"]}"#,
            code: nil),
        Row(
            name: "a ForEach tab into a section", operations: #"{"op":"moveTab","section":"places","tab":"top.a","toIndex":0}"#,
            code: "cross-section-move"),
        Row(
            name: "a section's tab into a ForEach", operations: #"{"op":"moveTab","section":"tops","tab":"places.a","toIndex":0}"#,
            code: "cross-section-move"),
        Row(
            name: "a top-level tab into a ForEach", operations: #"{"op":"setTabOrder","section":"tops","tabOrder":["top.a","inbox"]}"#,
            code: "cross-section-move"),
        Row(
            name: "collapse a ForEach", operations: #"{"op":"setSectionExpanded","section":"tops","expanded":false}"#, code: "customization-disabled"),
        Row(
            name: "another prefix's tab in a ForEach's list",
            operations: #"{"op":"setDynamicTabs","section":"picks","tabs":[{"id":"top.a","title":"A"}]}"#,
            code: "prefix-mismatch"),
        Row(name: "reset a ForEach's order", operations: #"{"op":"resetSectionOrder","section":"tops"}"#, code: nil),
        Row(
            name: "expand an unknown section", operations: #"{"op":"setSectionExpanded","section":"nope","expanded":false}"#, code: "unknown-section"),
        Row(name: "collapse a section", operations: #"{"op":"setSectionExpanded","section":"places","expanded":false}"#, code: nil),
        Row(name: "hide every hideable sidebar tab",
            operations: ["inbox", "places.a", "places.c", "search", "settings"].map {
                #"{"op":"setSidebarVisibility","tab":"\#($0)","visibility":"hidden"}"#
            }.joined(separator: ","), code: nil),
        Row(
            name: "reset everything", operations: #"{"op":"resetVisibility","placement":"all"},{"op":"resetSectionOrder"},{"op":"resetTabBarOrder"}"#,
            code: nil),
    ]

    @Test("rule codes", arguments: rows)
    func rule(row: Row) throws {
        let index = try Seeds.index(ruleSchema)
        let start = Customization.empty
        let codes = refusalCodes {
            _ = try CustomizationEditor.apply(try ops(#"{"operations": [\#(row.operations)]}"#), to: start, index: index)
        }
        #expect(codes == (row.code.map { [$0] } ?? []))
    }

    @Test("no-visible-tab refuses hiding the last visible tab, and names the operation")
    func noVisibleTab() throws {
        let index = try Seeds.index("""
            {"items": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}
            """)
        let found = violations {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "a", "visibility": "hidden"},
                                {"op": "setSidebarVisibility", "tab": "b", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        }
        #expect(found.map(\.code) == [.noVisibleTab])
        #expect(found.first?.pointer == "/operations/1")
    }

    @Test("no-visible-tab refuses hiding the last visible tab-bar item, and names the operation")
    func noVisibleTabBarTab() throws {
        let index = try Seeds.index("""
            {"items": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}
            """)
        let found = violations {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setTabBarVisibility", "tab": "a", "visibility": "hidden"},
                                {"op": "setTabBarVisibility", "tab": "b", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        }
        #expect(found.map(\.code) == [.noVisibleTab])
        #expect(found.first?.pointer == "/operations/1")
        #expect(found.first?.detail.contains("tabBar") == true)
        // One of the two hidden is fine: the sidebar keeps both, the bar keeps one.
        let one = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setTabBarVisibility", "tab": "a", "visibility": "hidden"}]}
            """), to: .empty, index: index)
        #expect(Layout(customization: one, index: index, sizeClass: .compact).tabBar.map(\.id) == ["b"])
    }

    @Test("a refusal names the operation index and field")
    func pointer() throws {
        let index = try Seeds.index(ruleSchema)
        let found = violations {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [{"op": "setSidebarVisibility", "tab": "inbox", "visibility": "hidden"},
                                {"op": "setSidebarVisibility", "tab": "home", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        }
        do {
            #expect(found == [Violation(location: .operation(1, field: .visibility), code: .notHideable,
                detail: "tab \"home\" has customization behavior \"disabled\" in the sidebar and cannot be hidden")])
            #expect(found.map(\.pointer) == ["/operations/1/visibility"])
        }
    }

    @Test("hiding in the sidebar hides in the tab bar (coupling); tab bar hides alone")
    func coupling() throws {
        let index = try Seeds.index(ruleSchema)
        let c = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setSidebarVisibility", "tab": "inbox", "visibility": "hidden"},
                            {"op": "setTabBarVisibility", "tab": "places.a", "visibility": "hidden"}]}
            """), to: .empty, index: index)
        let compact = Layout(customization: c, index: index, sizeClass: .compact)
        #expect(!(compact.tabBar + compact.more).map(\.id).contains("inbox"))
        #expect(!(compact.tabBar + compact.more).map(\.id).contains("places.a"))
        let regular = Layout(customization: c, index: index, sizeClass: .regular)
        #expect(regular.hidden == ["inbox"])
    }

    @Test("PUT is validated by the same rules, pointing at document entries")
    func replace() throws {
        let index = try Seeds.index(ruleSchema)
        let (doc, _) = try Customization.decode(try json("""
            {"tabs": {"home": {"sidebarVisibility": "hidden"}}}
            """))
        let found = violations { _ = try CustomizationEditor.replace(with: doc, index: index) }
        #expect(found.map(\.pointer) == ["/tabs/home/sidebarVisibility"])
        #expect(found.map(\.code) == [.notHideable])
        let (good, _) = try Customization.decode(try json("""
            {"tabs": {"inbox": {"sidebarVisibility": "hidden", "tabBarVisibility": "automatic"}},
             "sections": {"places": {"tabOrder": ["places.c", "places.b", "places.a"], "expanded": false}},
             "tabBarOrder": ["inbox", "feed"]}
            """))
        let accepted = try CustomizationEditor.replace(with: good, index: index)
        #expect(accepted.sections["places"] == .init(tabOrder: ["places.c", "places.b", "places.a"], expanded: false))
        #expect(accepted.tabs["inbox"]?.sidebarVisibility == .hidden)
    }

    @Test("malformed operations are 400s, not rule refusals", arguments: [
        (#"{"operations": [{"op": "explode"}]}"#, "invalid-value"),
        (#"{"operations": [{"op": "resetTabBarOrder", "extra": 1}]}"#, "unknown-field"),
        (#"{"operations": [{"op": "moveTab", "section": "s", "tab": "t", "toIndex": "1"}]}"#, "invalid-type"),
        (#"{"operations": [{"op": "setSidebarVisibility", "tab": "t", "visibility": "gone"}]}"#, "invalid-value"),
        (#"{"operations": [{"op": "setSidebarVisibility", "tab": "t"}]}"#, "missing-field"),
        (#"{"ops": []}"#, "unknown-field"),
        (#"[]"#, "invalid-type"),
    ])
    func malformed(body: String, code: String) throws {
        #expect(refusalCodes { _ = try ops(body) } == [code])
    }
}

@Suite("Schema validation")
struct SchemaValidationTests {
    @Test("schema rule codes", arguments: [
        (#"{"items": [{"id": "a", "title": "A"}, {"id": "a", "title": "B"}]}"#, ["duplicate-id"]),
        (#"{"items": [{"id": "a", "title": "A"}, {"kind": "section", "id": "a", "title": "S", "tabs": []}]}"#, ["duplicate-id"]),
        (#"{"items": [{"id": "", "title": "A"}]}"#, ["empty-id"]),
        (#"{"items": [{"id": "a", "title": " "}]}"#, ["empty-title"]),
            (
                #"{"items": [{"kind": "section", "id": "s", "title": "S", "tabs": [{"kind": "section", "id": "n", "title": "N", "tabs": []}]}]}"#,
                ["nested-section"]
            ),
        (#"{"items": [{"id": "a", "role": "search"}, {"id": "b", "role": "search"}]}"#, ["multiple-search-tabs"]),
            (
                #"{"items": [{"id": "a", "title": "A", "placement": "sidebarOnly", "defaultVisibility": {"tabBar": "visible"}}]}"#,
                ["sidebar-only-in-tab-bar"]
            ),
        (#"{"items": [{"id": "a", "title": "A", "placement": "floating"}]}"#, ["invalid-value"]),
        (#"{"items": [{"id": "a", "title": "A", "customizationBehavior": {"sidebar": "locked"}}]}"#, ["invalid-value"]),
        (#"{"items": [{"id": "a", "title": "A", "hiddenIn": ["tiny"]}]}"#, ["invalid-value"]),
        (#"{"items": [{"id": "a", "title": "A", "role": "search", "placement": "sidebarOnly"}]}"#, ["search-not-pinned"]),
        (#"{"items": [{"id": "\#(String(repeating: "x", count: 257))", "title": "A"}]}"#, ["id-too-long"]),
        (#"{"items": [{"id": "a", "title": "\#(String(repeating: "x", count: 1025))"}]}"#, ["title-too-long"]),
        // Limits count UTF-8 bytes: one grapheme cluster of 301 scalars (601 bytes) is not a short id.
        (#"{"items": [{"id": "a\#(String(repeating: "\u{301}", count: 300))", "title": "A"}]}"#, ["id-too-long"]),
        (#"{"items": [{"id": "a", "title": "A\#(String(repeating: "\u{301}", count: 600))"}]}"#, ["title-too-long"]),
        (#"{"items": [{"id": "a\u0001", "title": "A"}]}"#, ["invalid-id"]),
        (#"{"items": [{"id": "a", "title": "A", "systemImage": "x", "image": "y"}]}"#, ["conflicting-image"]),
            (
                #"{"items": [{"id": "list.a", "title": "A"}, {"kind": "section", "id": "s", "title": "S", "dynamicTabs": {"idPrefix": "list."}, "tabs": []}]}"#,
                ["dynamic-prefix-conflict"]
            ),
        // A top-level ForEach: an id like a section's, a prefix like a dynamic section's; never inside a section.
        (#"{"items": [{"kind": "forEach", "id": "", "dynamicTabs": {"idPrefix": "p."}}]}"#, ["empty-id"]),
        (#"{"items": [{"kind": "forEach", "id": "~derived.x", "dynamicTabs": {"idPrefix": "p."}}]}"#, ["invalid-id"]),
        (#"{"items": [{"id": "p", "title": "P"}, {"kind": "forEach", "id": "p", "dynamicTabs": {"idPrefix": "p."}}]}"#, ["duplicate-id"]),
            (
                #"{"items": [{"id": "p.a", "title": "A"}, {"kind": "forEach", "id": "f", "dynamicTabs": {"idPrefix": "p."}}]}"#,
                ["dynamic-prefix-conflict"]
            ),
            (
                #"{"items": [{"kind": "forEach", "id": "f", "dynamicTabs": {"idPrefix": "p."}}, {"kind": "forEach", "id": "g", "dynamicTabs": {"idPrefix": "p.x"}}]}"#,
         ["dynamic-prefix-conflict"]),
        (#"{"items": [{"kind": "section", "id": "s", "title": "S", "tabs": [{"kind": "forEach", "id": "f", "dynamicTabs": {"idPrefix": "p."}}]}]}"#,
         ["nested-section"]),
            (
                #"{"items": [{"kind": "forEach", "id": "f", "hiddenIn": ["compact"], "standIn": "f", "dynamicTabs": {"idPrefix": "p."}}]}"#,
                ["invalid-stand-in"]
            ),
        (#"{"items": [{"id": "", "title": ""}, {"id": "b", "title": "B", "placement": "nowhere"}]}"#, ["invalid-value", "empty-id", "empty-title"]),
    ])
    func rule(text: String, codes: [String]) {
        #expect(refusalCodes { _ = try TabSchema.parse(try json(text)) } == codes)
    }

    @Test("more than 500 items is refused")
    func tooMany() {
        let items = (0...500).map { #"{"id": "t\#($0)", "title": "T"}"# }.joined(separator: ",")
        #expect(refusalCodes { _ = try TabSchema.parse(try json(#"{"items": [\#(items)]}"#)) } == ["too-many-items"])
    }

    @Test("shape errors are malformed documents", arguments: [
        (#"{"items": [{"id": "a", "title": "A", "colour": "red"}]}"#, "unknown-field"),
        (#"{"items": {}}"#, "invalid-type"),
        (#"{}"#, "missing-field"),
        (#"{"items": [{"kind": "group", "id": "a", "title": "A"}]}"#, "invalid-value"),
        // A ForEach has no title, header, behavior or tabs of its own, and is nothing without its data tabs.
        (#"{"items": [{"kind": "forEach", "id": "f", "title": "F", "dynamicTabs": {"idPrefix": "p."}}]}"#, "unknown-field"),
        (#"{"items": [{"kind": "forEach", "id": "f", "expanded": false, "dynamicTabs": {"idPrefix": "p."}}]}"#, "unknown-field"),
        (#"{"items": [{"kind": "forEach", "id": "f", "tabs": [], "dynamicTabs": {"idPrefix": "p."}}]}"#, "unknown-field"),
        (#"{"items": [{"kind": "forEach", "id": "f", "customizationBehavior": {}, "dynamicTabs": {"idPrefix": "p."}}]}"#, "unknown-field"),
        (#"{"items": [{"kind": "forEach", "id": "f"}]}"#, "missing-field"),
        (#"{"items": [{"kind": "forEach", "id": "f", "dynamicTabs": null}]}"#, "missing-field"),
        (#"{"items": [{"kind": "forEach", "id": "f", "dynamicTabs": {}}]}"#, "missing-field"),
    ])
    func shape(text: String, code: String) {
        #expect(refusalCodes { _ = try TabSchema.parse(try json(text)) } == [code])
    }
}
