import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

/// One schema's layouts for every platform × style × size class, as a golden table: a change to any layout rule
/// shows up here as a changed line to read and accept (or not).
@Suite("Golden layouts: every platform × style × size class of one schema")
struct LayoutGoldenTests {
    /// The tabs of Apple's `customizationBehavior(_:for:)` example with its id-less Home, a music app's Browse and
    /// Playlists (stand-ins, size classes, data-driven and collapsed by default), a search tab; the app opts macOS in.
    static let schema = """
        {"items": [
          {"title": "Home", "systemImage": "house", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"id": "alerts", "title": "Alerts", "systemImage": "bell"},
          {"id": "browse", "title": "Browse", "systemImage": "list.bullet", "hiddenIn": ["regular"], "standIn": "climate"},
          {"id": "search", "title": "Find", "role": "search"},
          {"kind": "section", "id": "categories", "title": "Categories",
           "customizationBehavior": {"sidebar": "reorderable", "tabBar": "disabled"}, "tabs": [
            {"id": "climate", "title": "Climate", "systemImage": "fan"}, {"id": "lights", "title": "Lights", "systemImage": "lightbulb"}]},
          {"kind": "section", "id": "playlists", "title": "Playlists", "hiddenIn": ["compact"], "standIn": "browse", "expanded": false,
           "dynamicTabs": {"idPrefix": "pl.", "customizationBehavior": {"sidebar": "reorderable"}}, "tabs": []}
        ], "customizablePlatforms": ["macOS"]}
        """

    /// Alerts hidden, Lights first in Categories, two playlists (Focus moved first), Playlists opened.
    static let operations = """
        {"operations": [
          {"op": "setSidebarVisibility", "tab": "alerts", "visibility": "hidden"},
          {"op": "moveTab", "section": "categories", "tab": "lights", "toIndex": 0},
          {"op": "setDynamicTabs", "section": "playlists", "tabs": [{"id": "pl.run", "title": "Running"}, {"id": "pl.focus", "title": "Focus"}]},
          {"op": "moveTab", "section": "playlists", "tab": "pl.focus", "toIndex": 0},
          {"op": "setSectionExpanded", "section": "playlists", "expanded": true}]}
        """

    /// One line per layout: `platform style sizeClass | applied | sidebar | bar | more | pinned | hidden | fallbacks`.
    static func line(_ request: LayoutRequest, _ layout: Layout) -> String {
        let name = { (id: Identifier) in id == Seeds.derivedHome ? "home" : id.text }
        let tabs = { (tabs: [SchemaTab]) in tabs.map { name($0.id) }.joined(separator: " ") }
        let sidebar = layout.sidebar.map { item in
            switch item {
            case .tab(let tab): name(tab.id)
            case .section(let section): "\(section.section.id)\(section.expanded ? "" : "(closed)")[\(tabs(section.tabs))]"
            }
        }.joined(separator: " ")
        let fallbacks = layout.selectionFallback.map { "\(name($0.hidden))>\(name($0.select))" }.joined(separator: " ")
        let head = "\(request.platform?.rawValue ?? "-") \(request.style?.rawValue ?? "-") \(request.sizeClass.rawValue)"
        return "\(head) | \(layout.customizationApplied ? "applied" : "defaults") | sidebar: \(sidebar) | bar: \(tabs(layout.tabBar)) | "
            + "more: \(tabs(layout.more)) | pinned: \(tabs(layout.pinned)) | hidden: \(layout.hidden.map(name).joined(separator: " ")) | "
            + "fallback: \(fallbacks.isEmpty ? "-" : fallbacks)"
    }

    static let golden = """
        - - compact | applied | sidebar:  | bar: home browse | more: lights climate | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        - - regular | applied | sidebar: home categories[lights climate] playlists[pl.focus pl.run] | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        - sidebarAdaptable compact | applied | sidebar:  | bar: home browse | more: lights climate | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        - sidebarAdaptable regular | applied | sidebar: home categories[lights climate] playlists[pl.focus pl.run] | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        - tabBarOnly compact | applied | sidebar:  | bar: home browse | more: lights climate | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        - tabBarOnly regular | applied | sidebar:  | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        iOS - compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        iOS - regular | defaults | sidebar:  | bar: home alerts | more: climate lights pl.run pl.focus | pinned: search | hidden:  | fallback: browse>climate
        iOS sidebarAdaptable compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        iOS sidebarAdaptable regular | defaults | sidebar:  | bar: home alerts | more: climate lights pl.run pl.focus | pinned: search | hidden:  | fallback: browse>climate
        iOS tabBarOnly compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        iOS tabBarOnly regular | defaults | sidebar:  | bar: home alerts | more: climate lights pl.run pl.focus | pinned: search | hidden:  | fallback: browse>climate
        iPadOS - compact | applied | sidebar:  | bar: home browse | more: lights climate | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        iPadOS - regular | applied | sidebar: home categories[lights climate] playlists[pl.focus pl.run] | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        iPadOS sidebarAdaptable compact | applied | sidebar:  | bar: home browse | more: lights climate | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        iPadOS sidebarAdaptable regular | applied | sidebar: home categories[lights climate] playlists[pl.focus pl.run] | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        iPadOS tabBarOnly compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        iPadOS tabBarOnly regular | defaults | sidebar:  | bar: home alerts climate lights pl.run pl.focus | more:  | pinned: search | hidden:  | fallback: browse>climate
        macOS - compact | applied | sidebar: home browse categories[lights climate] | bar: home browse climate lights | more:  | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        macOS - regular | applied | sidebar: home categories[lights climate] playlists[pl.focus pl.run] | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        macOS sidebarAdaptable compact | applied | sidebar: home browse categories[lights climate] | bar: home browse climate lights | more:  | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        macOS sidebarAdaptable regular | applied | sidebar: home categories[lights climate] playlists[pl.focus pl.run] | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        macOS tabBarOnly compact | applied | sidebar:  | bar: home browse climate lights | more:  | pinned: search | hidden: alerts | fallback: alerts>home pl.focus>browse pl.run>browse
        macOS tabBarOnly regular | applied | sidebar:  | bar: home climate lights pl.focus pl.run | more:  | pinned: search | hidden: alerts | fallback: alerts>home browse>climate
        visionOS - compact | defaults | sidebar: home alerts browse categories[climate lights] | bar: home alerts browse climate lights | more:  | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        visionOS - regular | defaults | sidebar: home alerts categories[climate lights] playlists(closed)[pl.run pl.focus] | bar: home alerts climate lights pl.run pl.focus | more:  | pinned: search | hidden:  | fallback: browse>climate
        visionOS sidebarAdaptable compact | defaults | sidebar: home alerts browse categories[climate lights] | bar: home alerts browse climate lights | more:  | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        visionOS sidebarAdaptable regular | defaults | sidebar: home alerts categories[climate lights] playlists(closed)[pl.run pl.focus] | bar: home alerts climate lights pl.run pl.focus | more:  | pinned: search | hidden:  | fallback: browse>climate
        visionOS tabBarOnly compact | defaults | sidebar:  | bar: home alerts browse climate lights | more:  | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        visionOS tabBarOnly regular | defaults | sidebar:  | bar: home alerts climate lights pl.run pl.focus | more:  | pinned: search | hidden:  | fallback: browse>climate
        tvOS - compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        tvOS - regular | defaults | sidebar:  | bar: home alerts | more: climate lights pl.run pl.focus | pinned: search | hidden:  | fallback: browse>climate
        tvOS sidebarAdaptable compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        tvOS sidebarAdaptable regular | defaults | sidebar:  | bar: home alerts | more: climate lights pl.run pl.focus | pinned: search | hidden:  | fallback: browse>climate
        tvOS tabBarOnly compact | defaults | sidebar:  | bar: home alerts browse | more: climate lights | pinned: search | hidden:  | fallback: pl.run>browse pl.focus>browse
        tvOS tabBarOnly regular | defaults | sidebar:  | bar: home alerts | more: climate lights pl.run pl.focus | pinned: search | hidden:  | fallback: browse>climate
        """

    /// The layouts of `schema` after `operations`, one line per platform × style × size class.
    static func lines(schema: String, operations: String) throws -> [String] {
        let index = try Seeds.index(schema)
        let custom = try CustomizationEditor.apply(try ops(operations), to: .empty, index: index)
        var lines: [String] = []
        for platform in [nil] + Platform.allCases.map(Optional.some) {
            for style in [nil] + TabViewStyle.allCases.map(Optional.some) {
                for sizeClass in SizeClass.allCases {
                    let request = LayoutRequest(sizeClass: sizeClass, platform: platform, style: style)
                    lines.append(Self.line(request, Layout(customization: custom, index: index, request: request)))
                }
            }
        }
        return lines
    }

    static func expect(_ lines: [String], toMatch golden: String) {
        let expected = golden.split(separator: "\n").map(String.init)
        #expect(lines.count == 36)
        for (number, line) in lines.enumerated() {
            #expect(number < expected.count && line == expected[number], "line \(number + 1) is now: \(line)")
        }
    }

    @Test("every platform × style × size class")
    func golden() throws {
        Self.expect(try Self.lines(schema: Self.schema, operations: Self.operations), toMatch: Self.golden)
    }

    @Test("a top-level ForEach: every platform × style × size class")
    func goldenForEach() throws {
        Self.expect(try Self.lines(schema: Self.forEachSchema, operations: Self.forEachOperations), toMatch: Self.forEachGolden)
    }
}
