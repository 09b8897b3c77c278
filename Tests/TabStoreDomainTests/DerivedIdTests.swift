import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// Apple's `customizationBehavior(_:for:)` example 2 (docs/domain.md "Tabs without an id"): a tab `disabled` in both placements needs no
/// customization ID; the service derives one.
@Suite("Derived ids of tabs without a customization ID")
struct DerivedIdTests {
    /// The derived ids of a schema's tabs, in builder order.
    static func derived(_ text: String) throws -> [Identifier] {
        try Seeds.index(text).allTabs.filter(\.tab.hasDerivedId).map(\.tab.id)
    }

    static let home = #"{"title": "Home", "systemImage": "house", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}}"#

    @Test("the rule: 64-bit FNV-1a of place, title and occurrence, after ~derived.")
    func rule() {
        #expect(DerivedId.make(section: nil, title: "Home", occurrence: 1) == Seeds.derivedHome)
        #expect(DerivedId.make(section: nil, title: "Home", occurrence: 2) != Seeds.derivedHome)
        #expect(DerivedId.make(section: "s", title: "Home", occurrence: 1) != Seeds.derivedHome)
        // Length-prefixed: a section id and a title never run into each other.
        #expect(DerivedId.make(section: "ab", title: "c", occurrence: 1) != DerivedId.make(section: "a", title: "bc", occurrence: 1))
        // Bytes, not characters: precomposed and decomposed titles are two titles.
        #expect(DerivedId.make(section: nil, title: "caf\u{E9}", occurrence: 1) != DerivedId.make(section: nil, title: "cafe\u{301}", occurrence: 1))
        let id = DerivedId.make(section: nil, title: String(repeating: "x", count: 1024), occurrence: 1)
        #expect(id.byteCount == DerivedId.prefix.byteCount + 16 && id.isValidId)
    }

    struct Stability: Sendable, CustomStringConvertible {
        let name: String
        let after: String
        let same: Bool
        var description: String { name }
    }

    static let before = #"{"items": [\#(home), {"id": "a", "title": "A"}]}"#
    static let stability: [Stability] = [
        .init(name: "the same schema again", after: before, same: true),
        .init(name: "a tab added before it", after: #"{"items": [{"id": "new", "title": "New"}, \#(home), {"id": "a", "title": "A"}]}"#, same: true),
        .init(name: "another tab renamed and removed", after: #"{"items": [\#(home)]}"#, same: true),
        .init(
            name: "its own image changed",
            after: #"{"items": [\#(home.replacingOccurrences(of: "house", with: "house.fill")), {"id": "a", "title": "A"}]}"#, same: true),
        .init(name: "moved after another tab", after: #"{"items": [{"id": "a", "title": "A"}, \#(home)]}"#, same: true),
        .init(
            name: "retitled", after: #"{"items": [\#(home.replacingOccurrences(of: "Home", with: "Start")), {"id": "a", "title": "A"}]}"#, same: false
        ),
        .init(name: "moved into a section",
              after: #"{"items": [{"kind": "section", "id": "s", "title": "S", "tabs": [\#(home)]}, {"id": "a", "title": "A"}]}"#, same: false),
    ]

    @Test("stable across re-registration and unrelated schema changes; a new title or place is a new id", arguments: stability)
    func stable(row: Stability) throws {
        let before = try Self.derived(Self.before)
        let after = try Self.derived(row.after)
        #expect(before == [Seeds.derivedHome])
        #expect((after == before) == row.same)
    }

    @Test("id-less tabs of the same title and place count their occurrence; the served schema registers as the same")
    func occurrencesAndRoundTrip() throws {
        let text =
            #"{"items": [\#(Self.home), \#(Self.home), {"kind": "section", "id": "s", "title": "S", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}, "tabs": [{"title": "Home"}, {"id": "b", "title": "B"}]}]}"#
        let index = try Seeds.index(text)
        let ids = index.allTabs.map(\.tab.id)
        #expect(ids == [DerivedId.make(section: nil, title: "Home", occurrence: 1), DerivedId.make(section: nil, title: "Home", occurrence: 2),
                        DerivedId.make(section: "s", title: "Home", occurrence: 1), "b"])
        // A tab of a section disabled in both placements is not customizable either: it may omit its id.
        #expect(index.allTabs.map(\.tab.hasDerivedId) == [true, true, true, false])
        let served = index.schema.json()
        #expect(JSONWriter.string(served).contains(#""id":"\#(Seeds.derivedHome)""#))
        #expect(try TabSchema.parse(served) == index.schema)
        var problems: [Violation] = []
        #expect(try TabSchema.decode(served, problems: &problems) == index.schema && problems.isEmpty)
    }

    static let schemaRows: [(String, [String])] = [
        // A tab customizable in some placement needs an id.
        (#"{"items": [{"title": "A"}]}"#, ["empty-id"]),
        (#"{"items": [{"title": "A", "customizationBehavior": {"sidebar": "disabled"}}]}"#, ["empty-id"]),
        (#"{"items": [{"title": "A", "customizationBehavior": {"sidebar": "disabled", "tabBar": "reorderable"}}]}"#, ["empty-id"]),
        (
            #"{"items": [{"kind": "section", "id": "s", "title": "S", "customizationBehavior": {"sidebar": "disabled"}, "tabs": [{"title": "A"}]}]}"#,
            ["empty-id"]
        ),
        // An empty id is no id at all.
        (#"{"items": [{"id": "", "title": "A", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}}]}"#, ["empty-id"]),
        // The ~derived. space is the service's: a tab may repeat its own derived id, nothing else may use it.
        (
            #"{"items": [{"id": "~derived.6b51f61e9603dc73", "title": "Home", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}}]}"#,
            []
        ),
        (
            #"{"items": [{"id": "~derived.0000000000000000", "title": "Home", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}}]}"#,
            ["invalid-id"]
        ),
        (#"{"items": [{"id": "~derived.6b51f61e9603dc73", "title": "Home"}]}"#, ["empty-id"]),
        (#"{"items": [{"kind": "section", "id": "~derived.s", "title": "S", "tabs": []}]}"#, ["invalid-id"]),
        (#"{"items": [{"kind": "section", "id": "s", "title": "S", "dynamicTabs": {"idPrefix": "~derived.x"}, "tabs": []}]}"#, ["invalid-id"]),
        // A dynamic prefix may not claim a derived id either.
        (
            #"{"items": [\#(home), {"kind": "section", "id": "s", "title": "S", "dynamicTabs": {"idPrefix": "~"}, "tabs": []}]}"#,
            ["dynamic-prefix-conflict"]
        ),
    ]

    @Test("schema rules about ids without a customization ID", arguments: schemaRows)
    func schemaRules(text: String, codes: [String]) {
        #expect(refusalCodes { _ = try TabSchema.parse(try json(text)) } == codes)
    }

    @Test("no operation can name a tab with a derived id; its section's order lists only the named tabs")
    func notNameable() throws {
        let index = try Seeds.index("""
            {"items": [\(Self.home), {"id": "a", "title": "A"},
              {"kind": "section", "id": "s", "title": "S", "tabs": [
                {"id": "s.a", "title": "SA"}, {"title": "Pinned", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
                {"id": "s.b", "title": "SB"}]}]}
            """)
        let pinned = DerivedId.make(section: "s", title: "Pinned", occurrence: 1)
        for operation in [
            #"{"op": "setSidebarVisibility", "tab": "\#(pinned)", "visibility": "automatic"}"#,
            #"{"op": "moveTab", "section": "s", "tab": "\#(pinned)", "toIndex": 0}"#,
            #"{"op": "setTabOrder", "section": "s", "tabOrder": ["s.b", "\#(pinned)", "s.a"]}"#,
            #"{"op": "setTabBarOrder", "tabBarOrder": ["a", "\#(Seeds.derivedHome)"]}"#,
        ] {
            #expect(refusalCodes { _ = try CustomizationEditor.apply(try ops(#"{"operations": [\#(operation)]}"#), to: .empty, index: index) }
                == ["customization-disabled"], "\(operation)")
        }
        let reordered = try CustomizationEditor.apply(
            try ops(#"{"operations": [{"op": "setTabOrder", "section": "s", "tabOrder": ["s.b", "s.a"]}]}"#),
                                                      to: .empty, index: index)
        #expect(reordered.sections["s"]?.tabOrder == ["s.b", "s.a"])
        #expect(refusalCodes {
                _ = try CustomizationEditor.apply(
                    try ops(#"{"operations": [{"op": "setTabOrder", "section": "s", "tabOrder": ["s.b"]}]}"#), to: .empty, index: index)
        } == ["invalid-tab-order"])
        // The layout shows it at its builder position, between the tabs the user reordered.
        let layout = Layout(customization: reordered, index: index, sizeClass: .regular)
        guard case .section(let section) = layout.sidebar.last else { Issue.record("no section"); return }
        #expect(section.tabs.map(\.id) == ["s.b", pinned, "s.a"])
        let moved = try CustomizationEditor.apply(try ops(#"{"operations": [{"op": "moveTab", "section": "s", "tab": "s.a", "toIndex": 1}]}"#),
                                                  to: .empty, index: index)
        #expect(moved.sections["s"]?.tabOrder == ["s.b", "s.a"])
        // A PUT naming it is refused at its entry.
        let (document, _) = try Customization.decode(try json(#"{"tabs": {"\#(pinned)": {"sidebarVisibility": "visible"}}}"#))
        let refused = violations { _ = try CustomizationEditor.replace(with: document, index: index) }
        #expect(refused.map(\.code) == [.customizationDisabled])
        #expect(refused.first?.location == .tabVisibility(tab: pinned, .sidebar))
    }
}
