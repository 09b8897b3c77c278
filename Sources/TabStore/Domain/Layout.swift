import TabStoreSupport
/// What a `TabView` shows for one user and client (docs/domain.md "Layout: what the TabView shows"), so every client renders the
/// same thing without re-implementing the rules.
package struct Layout: Sendable, Equatable {
    /// How the `TabView` presents its tabs.
    package enum Shape: Sendable, Equatable {
        /// A sidebar of top-level tabs and sections, and the tab bar it adapts to (iPad regular, Mac, visionOS).
        case sidebar
        /// The tab bar alone, every visible tab in it (`tabBarOnly` with room for it).
        case tabBar
        /// The bottom bar (iPhone, tvOS, compact): top-level tabs, at most five items counting More; the
        /// sections' tabs in More, without headers (docs/domain.md "Layout: what the TabView shows").
        case compact
    }

    package struct Section: Sendable, Equatable {
        package let section: SchemaSection
        package let expanded: Bool
        package let tabs: [SchemaTab]
    }

    package enum SidebarItem: Sendable, Equatable {
        case tab(SchemaTab)
        case section(Section)
    }

    /// A tab the layout does not show and the tab a client selects instead (docs/domain.md "Layout: what the TabView shows").
    package struct Fallback: Sendable, Equatable {
        package let hidden: Identifier
        package let select: Identifier
    }

    package let request: LayoutRequest
    /// Whether the user's choices shaped this layout (`CustomizationRules.appliesCustomization`); when not, the
    /// schema's defaults did, with the user's data-driven tabs.
    package let customizationApplied: Bool
    package var sidebar: [SidebarItem] = []
    package var tabBar: [SchemaTab] = []
    package var pinned: [SchemaTab] = []
    package var more: [SchemaTab] = []
    package var hidden: [Identifier] = []
    package var selectionFallback: [Fallback] = []

    package var sizeClass: SizeClass { request.sizeClass }

    /// At most this many items in a compact bar, a More item included (at most five visible tabs, the sixth and later fold into More).
    package static let compactBarItems = 5
    /// With More, the compact bar keeps this many tabs.
    package static let compactBarSlots = 4

    package init(customization: Customization, index: SchemaIndex, sizeClass: SizeClass) {
        self.init(customization: customization, index: index, request: LayoutRequest(sizeClass: sizeClass))
    }

    package init(customization stored: Customization, index: SchemaIndex, request: LayoutRequest) {
        self.request = request
        customizationApplied = CustomizationRules.appliesCustomization(index.schema, platform: request.platform, style: request.style)
        let customization = customizationApplied ? stored : stored.dataOnly
        let rules = CustomizationRules(index)
        let sizeClass = request.sizeClass
        let present = { (hiddenIn: [SizeClass]) in !hiddenIn.contains(sizeClass) }
        let visible = { (info: SchemaIndex.TabInfo, placement: Placement) in
            rules.isVisible(info, in: placement, customization: customization)
        }

        // Every tab that exists in this size class: top-level ones (a top-level ForEach's among them, at its position
        // and in its shown order), and each section's in its shown order; and the builder order of the tab bar (a
        // section's static tabs in builder order, its data-driven tabs after them).
        var topLevel: [SchemaIndex.TabInfo] = []
        var sections: [(SchemaSection, [SchemaIndex.TabInfo])] = []
        var builderTabs: [SchemaIndex.TabInfo] = []
        for item in index.schema.items {
            switch item {
            case .tab(let tab):
                guard present(tab.hiddenIn) else { continue }
                let info = SchemaIndex.TabInfo(tab: tab, sectionId: nil, isDynamic: false)
                topLevel.append(info)
                builderTabs.append(info)
            case .section(let section):
                guard present(section.hiddenIn) else { continue }
                let tabs = rules.shownOrder(of: section, in: customization).compactMap { rules.tab($0, in: customization) }
                    .filter { present($0.tab.hiddenIn) }
                if section.isForEach {
                    // A ForEach directly inside the TabView (docs/domain.md "A top-level ForEach"): no header; its tabs are top-level tabs.
                    topLevel += tabs
                    builderTabs += tabs
                    continue
                }
                sections.append((section, tabs))
                builderTabs += index.staticTabs(of: section).filter { present($0.tab.hiddenIn) } + tabs.filter(\.isDynamic)
            }
        }

        let shape = request.shape
        if shape == .sidebar {
            // Sidebar: top-level tabs first (a top-level ForEach's at its position), then sections, each in effective
            // order, without hidden tabs; the search tab is never in it (it moves to the toolbar: `pinned`).
            for info in topLevel where !info.tab.isPinned {
                if visible(info, .sidebar) { sidebar.append(.tab(Self.shown(info.tab))) }
            }
            for (section, tabs) in sections {
                let shown = tabs.filter { visible($0, .sidebar) }.map { Self.shown($0.tab) }
                let expanded = customization.sections[section.id]?.expanded ?? section.expanded
                sidebar.append(.section(Section(section: section, expanded: expanded, tabs: shown)))
            }
        }

        // Pinned tabs stand apart at the trailing end of the bar (in the toolbar beside a sidebar).
        pinned = topLevel.filter { $0.tab.isPinned && visible($0, .tabBar) }.map { Self.shown($0.tab) }
        if shape == .compact {
            layOutCompact(topLevel: topLevel, sections: sections, rules: rules, customization: customization)
        } else {
            // The tab bar: every visible tab, top-level or in a section, in the user's order or builder order.
            let barItems = builderTabs.filter { !$0.tab.isPinned && visible($0, .tabBar) }
            tabBar = Self.order(barItems, by: customization.tabBarOrder, rules: rules).map(Self.shown)
        }
        // Hidden: the tabs of this size class the layout leaves out (the user hid them, or the schema's defaults keep
        // them out), in builder order.
        let shown = Set(shownTabs.map(\.id))
        hidden = (topLevel + sections.flatMap(\.1)).map(\.tab.id).filter { !shown.contains($0) }
        selectionFallback = Self.fallbacks(for: self, index: index, rules: rules, customization: customization)
    }

    /// Every tab the layout shows: the sidebar's (where there is one) first, then the bar's, More's and the pinned ones.
    package var shownTabs: [SchemaTab] {
        let sidebarTabs = sidebar.flatMap { item -> [SchemaTab] in
            switch item {
            case .tab(let tab): [tab]
            case .section(let section): section.tabs
            }
        }
        return sidebarTabs + tabBar + more + pinned
    }

    /// The iPhone (docs/domain.md "Layout: what the TabView shows", compact): the bar holds the top-level tabs (a top-level ForEach's too, counting
    /// toward the five);
    /// every visible tab of a section goes to More, without headers, in the section's order. When the bar's tabs and
    /// a More item (if More is not empty) would be more than five, the bar shows the first four and More starts with
    /// the bar's overflow.
    private mutating func layOutCompact(topLevel: [SchemaIndex.TabInfo], sections: [(SchemaSection, [SchemaIndex.TabInfo])],
                                        rules: CustomizationRules, customization: Customization) {
        let visible = { (info: SchemaIndex.TabInfo) in rules.isVisible(info, in: .tabBar, customization: customization) }
        let barItems = topLevel.filter { !$0.tab.isPinned && visible($0) }
        let sectionTabs = sections.flatMap(\.1).filter(visible).map { Self.shown($0.tab) }
        var bar = Self.order(barItems, by: customization.tabBarOrder, rules: rules).map(Self.shown)
        var overflow: [SchemaTab] = []
        if bar.count + (sectionTabs.isEmpty ? 0 : 1) > Self.compactBarItems {
            overflow = Array(bar[Self.compactBarSlots...])
            bar = Array(bar[..<Self.compactBarSlots])
        }
        tabBar = bar
        more = overflow + sectionTabs
    }

    /// A tab as a layout shows it. The search tab's label is the system's (a label passed to
    /// `Tab(role: .search)` is ignored; the system shows the localized "Search" with the magnifying glass).
    static func shown(_ tab: SchemaTab) -> SchemaTab {
        guard tab.role == .search else { return tab }
        var shown = tab
        shown.title = searchTitleKey
        shown.systemImage = "magnifyingglass"
        shown.image = nil
        return shown
    }

    /// The key a client localizes for the search tab's label (and the title shown when it does not).
    package static let searchTitleKey = "Search"

    /// Orders bar items by the user's `tabBarOrder`: items that cannot move keep their default index,
    /// listed items follow the user's order, unlisted ones go to the end.
    static func order(_ items: [SchemaIndex.TabInfo], by userOrder: [Identifier]?, rules: CustomizationRules) -> [SchemaTab] {
        guard let userOrder else { return items.map(\.tab) }
        let fixed = rules.fixedPositions(of: items, in: .tabBar)
        let rank = Dictionary(userOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let movable = items.filter { fixed[$0.tab.id] == nil }.enumerated()
            .sorted { (rank[$0.element.tab.id] ?? Int.max, $0.offset) < (rank[$1.element.tab.id] ?? Int.max, $1.offset) }
            .map(\.element.tab.id)
        let ids = CustomizationRules.placing(fixed, in: movable + fixed.keys.sorted { fixed[$0]! < fixed[$1]! })
        let byId = Dictionary(items.map { ($0.tab.id, $0.tab) }, uniquingKeysWith: { first, _ in first })
        return ids.compactMap { byId[$0] }
    }
}
