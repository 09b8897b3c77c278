import TabStoreSupport
/// What a `TabView` shows for one user and size class (DOMAIN.md section 3), so every client renders
/// the same thing without re-implementing the rules.
package struct Layout: Sendable, Equatable {
    package struct Section: Sendable, Equatable {
        package let section: SchemaSection
        package let expanded: Bool
        package let tabs: [SchemaTab]
    }

    package enum SidebarItem: Sendable, Equatable {
        case tab(SchemaTab)
        case section(Section)
    }

    package let sizeClass: SizeClass
    package var sidebar: [SidebarItem] = []
    package var tabBar: [SchemaTab] = []
    package var pinned: [SchemaTab] = []
    package var more: [SchemaTab] = []
    package var hidden: [Identifier] = []

    /// Compact bars with this many items or more show the first four and a More list.
    package static let moreThreshold = 6
    package static let compactBarSlots = 4

    package init(customization: Customization, index: SchemaIndex, sizeClass: SizeClass) {
        self.sizeClass = sizeClass
        let rules = CustomizationRules(index)
        let present = { (hiddenIn: [SizeClass]) in !hiddenIn.contains(sizeClass) }
        let visible = { (info: SchemaIndex.TabInfo, placement: Placement) in
            rules.isVisible(info, in: placement, customization: customization)
        }

        // Every tab that exists in this size class, with the section it is in, in effective sidebar order.
        var sidebarItems: [SidebarItem] = []
        var sections: [(SchemaSection, [SchemaIndex.TabInfo])] = []
        var topLevel: [SchemaIndex.TabInfo] = []
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
                let tabs = rules.order(of: section, in: customization).compactMap { index.tab($0) }
                    .filter { present($0.tab.hiddenIn) }
                sections.append((section, tabs))
                builderTabs += section.tabs.filter { present($0.hiddenIn) }
                    .map { SchemaIndex.TabInfo(tab: $0, sectionId: section.id, isDynamic: false) }
                builderTabs += tabs.filter(\.isDynamic)
            }
        }

        if sizeClass == .regular {
            // Sidebar: top-level tabs first, then sections, each in effective order, without hidden tabs.
            for info in topLevel where !info.tab.isPinned {
                if visible(info, .sidebar) { sidebarItems.append(.tab(info.tab)) } else { hidden.append(info.tab.id) }
            }
            for (section, tabs) in sections {
                var shown: [SchemaTab] = []
                for info in tabs {
                    if visible(info, .sidebar) { shown.append(info.tab) } else { hidden.append(info.tab.id) }
                }
                let expanded = customization.sections[section.id]?.expanded ?? true
                sidebarItems.append(.section(Section(section: section, expanded: expanded, tabs: shown)))
            }
            sidebar = sidebarItems
        }

        // Tab bar: pinned tabs stand apart; the rest in the user's order or builder order.
        var barItems: [SchemaIndex.TabInfo] = []
        for info in builderTabs {
            if info.tab.isPinned {
                if visible(info, .tabBar) { pinned.append(info.tab) } else if sizeClass == .compact { hidden.append(info.tab.id) }
                continue
            }
            if visible(info, .tabBar) {
                barItems.append(info)
            } else if sizeClass == .compact {
                hidden.append(info.tab.id)
            }
        }
        var bar = Self.order(barItems, by: customization.tabBarOrder, rules: rules)
        if sizeClass == .compact, bar.count >= Self.moreThreshold {
            more = Array(bar[Self.compactBarSlots...])
            bar = Array(bar[..<Self.compactBarSlots])
        }
        tabBar = bar
    }

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
