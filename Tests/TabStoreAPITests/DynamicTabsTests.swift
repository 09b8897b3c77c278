import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// A schema with data-driven sections of every behavior: `lists` as ForEach makes them (hide, not move),
/// `mixes` reorderable (move, not hide), `frozen` disabled, `locked` a disabled section, and a static tab
/// inside `lists`.
let dynamicSchema = """
    {"items": [
      {"id": "home", "title": "Home"}, {"id": "inbox", "title": "Inbox"},
      {"kind": "section", "id": "lists", "title": "Lists", "dynamicTabs": {"idPrefix": "list."},
       "tabs": [{"id": "all", "title": "All"}]},
      {"kind": "section", "id": "mixes", "title": "Mixes",
       "dynamicTabs": {"idPrefix": "mix.", "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}}, "tabs": []},
      {"kind": "section", "id": "frozen", "title": "Frozen",
       "dynamicTabs": {"idPrefix": "frozen.", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}}, "tabs": []},
      {"kind": "section", "id": "locked", "title": "Locked", "customizationBehavior": {"sidebar": "disabled"},
       "dynamicTabs": {"idPrefix": "locked.", "customizationBehavior": {"sidebar": "reorderable"}}, "tabs": []},
      {"kind": "section", "id": "plain", "title": "Plain", "tabs": [{"id": "plain.a", "title": "PA"}]}
    ]}
    """

@Suite("A user's data-driven tabs (setDynamicTabs)")
struct DynamicTabsTests {
    static func list(_ section: String, _ ids: [String]) -> String {
        let tabs = ids.map { #"{"id": "\#($0)", "title": "T \#($0)"}"# }.joined(separator: ",")
        return #"{"op": "setDynamicTabs", "section": "\#(section)", "tabs": [\#(tabs)]}"#
    }

    static let stored = [list("lists", ["list.a", "list.b"]), list("mixes", ["mix.a", "mix.b"]), list("frozen", ["frozen.a", "frozen.b"]),
                         list("locked", ["locked.a", "locked.b"])].joined(separator: ",")

    struct Row: Sendable, CustomStringConvertible {
        let name: String
        let operations: String
        /// Apply after storing every section's list (`stored`).
        var afterLists = false
        let code: String?
        var pointer: String?
        var description: String { name }
    }

    static let rows: [Row] = [
        // Behaviors (docs/domain.md "Tab schema"): ForEach tabs hide but do not move by default; reorderable moves but does not hide.
        Row(name: "hide a default dynamic tab", operations: #"{"op":"setSidebarVisibility","tab":"list.a","visibility":"hidden"}"#, code: nil),
        Row(name: "move a default dynamic tab", operations: #"{"op":"moveTab","section":"lists","tab":"list.a","toIndex":0}"#, code: "not-movable"),
        Row(name: "a default dynamic tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["list.a"]}"#, code: "not-movable"),
        Row(
            name: "hide a reorderable dynamic tab", operations: #"{"op":"setTabBarVisibility","tab":"mix.a","visibility":"hidden"}"#,
            code: "not-hideable"),
        Row(name: "move a reorderable dynamic tab", operations: #"{"op":"moveTab","section":"mixes","tab":"mix.a","toIndex":0}"#, code: nil),
        Row(name: "a reorderable dynamic tab in the bar order", operations: #"{"op":"setTabBarOrder","tabBarOrder":["mix.a","home"]}"#, code: nil),
        Row(
            name: "hide a disabled dynamic tab", operations: #"{"op":"setSidebarVisibility","tab":"frozen.a","visibility":"hidden"}"#,
            code: "not-hideable"),
        Row(
            name: "move a disabled dynamic tab", operations: #"{"op":"moveTab","section":"frozen","tab":"frozen.a","toIndex":0}"#, code: "not-movable"
        ),
        Row(
            name: "move in a disabled section", operations: #"{"op":"moveTab","section":"locked","tab":"locked.a","toIndex":0}"#,
            code: "customization-disabled"),
        // Once a list is stored, the order holds exactly its tabs; immovable ones keep their place.
        Row(name: "a whole order of a reorderable list", operations: #"{"op":"setTabOrder","section":"mixes","tabOrder":["mix.b","mix.a"]}"#,
            afterLists: true, code: nil),
        Row(name: "an order missing a listed tab", operations: #"{"op":"setTabOrder","section":"mixes","tabOrder":["mix.b"]}"#,
            afterLists: true, code: "invalid-tab-order"),
        Row(name: "an order naming an unlisted tab", operations: #"{"op":"setTabOrder","section":"mixes","tabOrder":["mix.b","mix.a","mix.c"]}"#,
            afterLists: true, code: "unknown-tab", pointer: "/operations/0/tabOrder/2"),
        Row(
            name: "the static tab moved past immovable listed ones",
            operations: #"{"op":"setTabOrder","section":"lists","tabOrder":["list.a","all","list.b"]}"#,
            afterLists: true, code: "not-movable"),
        Row(name: "the default order of a ForEach list", operations: #"{"op":"setTabOrder","section":"lists","tabOrder":["all","list.a","list.b"]}"#,
            afterLists: true, code: nil),
        Row(name: "an unlisted id once a list is stored", operations: #"{"op":"setSidebarVisibility","tab":"list.z","visibility":"hidden"}"#,
            afterLists: true, code: "unknown-tab", pointer: "/operations/0/tab"),
        Row(
            name: "any id of the prefix before a list is stored", operations: #"{"op":"setSidebarVisibility","tab":"list.z","visibility":"hidden"}"#,
            code: nil),
        // The list itself.
        Row(name: "a list for a static section", operations: list("plain", ["plain.b"]), code: "not-dynamic-section", pointer: "/operations/0/tabs"),
        Row(name: "a list for an unknown section", operations: list("nope", ["nope.a"]), code: "unknown-section", pointer: "/operations/0/section"),
        Row(
            name: "an id outside the prefix", operations: list("lists", ["list.a", "mix.a"]), code: "prefix-mismatch",
            pointer: "/operations/0/tabs/1/id"),
        Row(name: "the prefix alone", operations: list("lists", ["list."]), code: "prefix-mismatch", pointer: "/operations/0/tabs/0/id"),
        Row(name: "an id twice", operations: list("lists", ["list.a", "list.b", "list.a"]), code: "duplicate-id", pointer: "/operations/0/tabs/2/id"),
        Row(name: "a blank title", operations: #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.a","title":" "}]}"#,
            code: "empty-title", pointer: "/operations/0/tabs/0/title"),
        Row(name: "a title over 1024 bytes in 342 characters",
            operations: #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.a","title":"\#(String(repeating: "ї", count: 513))"}]}"#,
            code: "title-too-long", pointer: "/operations/0/tabs/0/title"),
        Row(name: "an image name over 1024 bytes",
            operations:
                #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.a","title":"A","image":"\#(String(repeating: "i", count: 1025))"}]}"#,
            code: "image-too-long", pointer: "/operations/0/tabs/0/image"),
        Row(
            name: "both images",
            operations: #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.a","title":"A","image":"a","systemImage":"b"}]}"#,
            code: "conflicting-image", pointer: "/operations/0/tabs/0/image"),
        Row(name: "500 tabs", operations: list("lists", (0..<500).map { "list.\($0)" }), code: nil),
        Row(name: "an empty list", operations: list("lists", []), code: nil),
        // Malformed lists are 400s.
        Row(name: "501 tabs", operations: list("lists", (0...500).map { "list.\($0)" }), code: "too-many-entries", pointer: "/operations/0/tabs"),
        Row(
            name: "an id with a control character",
            operations: #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.\u0007","title":"A"}]}"#,
            code: "invalid-id", pointer: "/operations/0/tabs/0/id"),
        Row(name: "an id over 256 bytes", operations: list("lists", ["list." + String(repeating: "\u{212A}", count: 84)]),
            code: "invalid-id", pointer: "/operations/0/tabs/0/id"),
        Row(name: "no title", operations: #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.a"}]}"#,
            code: "missing-field", pointer: "/operations/0/tabs/0/title"),
        Row(name: "an unknown member", operations: #"{"op":"setDynamicTabs","section":"lists","tabs":[{"id":"list.a","title":"A","color":"red"}]}"#,
            code: "unknown-field", pointer: "/operations/0/tabs/0/color"),
        Row(name: "no tabs", operations: #"{"op":"setDynamicTabs","section":"lists"}"#, code: "missing-field", pointer: "/operations/0/tabs"),
    ]

    @Test("rule codes and where they point", arguments: rows)
    func rule(row: Row) throws {
        let index = try Seeds.index(dynamicSchema)
        let start = row.afterLists ? try CustomizationEditor.apply(try ops(#"{"operations": [\#(Self.stored)]}"#), to: .empty, index: index) : .empty
        let found = violations { _ = try CustomizationEditor.apply(try ops(#"{"operations": [\#(row.operations)]}"#), to: start, index: index) }
        #expect(found.map(\.code.rawValue) == (row.code.map { [$0] } ?? []))
        if let pointer = row.pointer { #expect(found.first?.pointer == pointer) }
    }

    @Test("layouts show the stored tabs with their titles and images, in the app's order after the section's own tabs")
    func layout() throws {
        let index = try Seeds.index(dynamicSchema)
        let custom = try CustomizationEditor.apply(try ops("""
            {"operations": [{"op": "setDynamicTabs", "section": "lists", "tabs": [
              {"id": "list.run", "title": "Running", "image": "run-cover"}, {"id": "list.focus", "title": "Focus", "systemImage": "brain"}]}]}
            """), to: .empty, index: index)
        #expect(custom.dynamicTabs["lists"]?.tabs.map(\.id) == ["list.run", "list.focus"])
        let regular = Layout(customization: custom, index: index, sizeClass: .regular)
        guard case .section(let lists) = regular.sidebar[2] else { Issue.record("no section"); return }
        #expect(lists.tabs.map(\.id) == ["all", "list.run", "list.focus"])
        #expect(lists.tabs.map(\.title) == ["All", "Running", "Focus"])
        #expect(lists.tabs.map(\.image) == [nil, "run-cover", nil])
        #expect(lists.tabs.map(\.systemImage) == [nil, nil, "brain"])
        #expect(regular.tabBar.map(\.id) == ["home", "inbox", "all", "list.run", "list.focus", "plain.a"])
        let compact = Layout(customization: custom, index: index, sizeClass: .compact)
        #expect(compact.tabBar.map(\.id) == ["home", "inbox"])
        #expect(compact.more.map(\.id) == ["all", "list.run", "list.focus", "plain.a"])
        let encoded = JSONWriter.string(regular.json(appId: "a", userId: "u", customization: custom))
        #expect(encoded.contains(#"{"kind":"tab","id":"list.run","title":"Running","image":"run-cover"}"#))
    }

    @Test("an id dropped from the list is pruned from the user's choices; new ids join the order")
    func pruning() throws {
        let index = try Seeds.index(dynamicSchema)
        let first = try CustomizationEditor.apply(try ops("""
            {"operations": [\(Self.stored),
              {"op": "setSidebarVisibility", "tab": "list.a", "visibility": "hidden"},
              {"op": "setTabOrder", "section": "mixes", "tabOrder": ["mix.b", "mix.a"]},
              {"op": "setTabBarOrder", "tabBarOrder": ["mix.a", "inbox"]}]}
            """), to: .empty, index: index)
        #expect(first.tabs["list.a"]?.sidebarVisibility == .hidden)
        let second = try CustomizationEditor.apply(try ops("""
            {"operations": [\(Self.list("lists", ["list.b"])), \(Self.list("mixes", ["mix.c", "mix.b"]))]}
            """), to: first, index: index)
        #expect(second.tabs["list.a"] == nil)
        #expect(second.sections["mixes"]?.tabOrder == ["mix.b", "mix.c"])
        #expect(second.tabBarOrder?.contains("mix.a") == false)
        // The same list again changes nothing.
        let again = try CustomizationEditor.apply(try ops(#"{"operations": [\#(Self.list("lists", ["list.b"]))]}"#), to: second, index: index)
        #expect(again.sameChoices(as: second))
        // Within one PATCH, an operation after the list sees only its tabs.
        #expect(refusalCodes {
            _ = try CustomizationEditor.apply(try ops("""
                {"operations": [\(Self.list("lists", ["list.b"])), {"op": "setSidebarVisibility", "tab": "list.a", "visibility": "hidden"}]}
                """), to: .empty, index: index)
        } == ["unknown-tab"])
    }

    @Test("PUT takes the lists too (before the choices that name their tabs), and points into them")
    func put() throws {
        let index = try Seeds.index(dynamicSchema)
        let (document, _) = try Customization.decode(try json("""
            {"tabs": {"list.b": {"sidebarVisibility": "hidden"}},
             "sections": {"mixes": {"tabOrder": ["mix.b", "mix.a"]}},
             "dynamicTabs": {"lists": [{"id": "list.a", "title": "A"}, {"id": "list.b", "title": "B", "systemImage": "b"}],
                             "mixes": [{"id": "mix.a", "title": "MA"}, {"id": "mix.b", "title": "MB"}]}}
            """))
        let accepted = try CustomizationEditor.replace(with: document, index: index)
        #expect(accepted.sameChoices(as: document))
        let encoded = JSONWriter.string(accepted.json(appId: "a", userId: "u"))
        #expect(
            encoded.hasSuffix(
                #""tabBarOrder":null,"dynamicTabs":{"lists":[{"id":"list.a","title":"A"},{"id":"list.b","title":"B","systemImage":"b"}],"mixes":[{"id":"mix.a","title":"MA"},{"id":"mix.b","title":"MB"}]}}"#
            ))
        #expect(try Customization.decodeStored(Array(encoded.utf8)).sameChoices(as: accepted))
        let (bad, _) = try Customization.decode(
            try json(#"{"dynamicTabs": {"lists": [{"id": "list.a", "title": "A"}, {"id": "mix.a", "title": "M"}]}}"#))
        let refused = violations { _ = try CustomizationEditor.replace(with: bad, index: index) }
        #expect(refused.map(\.code) == [.prefixMismatch])
        #expect(refused.map(\.pointer) == ["/dynamicTabs/lists/1/id"])
        // Documents without lists keep their v1 bytes.
        #expect(!JSONWriter.string(Customization.empty.json(appId: "a", userId: "u")).contains("dynamicTabs"))
        #expect(refusalCodes { _ = try Customization.decode(try json(#"{"dynamicTabs": {"lists": [{"id": "list.a"}]}}"#)) } == ["missing-field"])
    }

    @Test("a stored document's lists are read without the request limits (a write accepted once stays readable)")
    func storedWithoutLimits() throws {
        let tabs = (0..<600).map { #"{"id": "list.\#($0)", "title": "T"}"# }.joined(separator: ",")
        let text = #"{"revision": 3, "schemaVersion": 1, "tabs": {}, "sections": {}, "tabBarOrder": null, "dynamicTabs": {"lists": [\#(tabs)]}}"#
        #expect(try Customization.decodeStored(Array(text.utf8)).dynamicTabs["lists"]?.count == 600)
        #expect(refusalCodes { _ = try Customization.decode(try json(text)) } == ["too-many-entries"])
    }
}
