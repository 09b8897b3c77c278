import Foundation

// Queued operations applied locally, so the UI shows a person's change at once. These are the rules the client can
// know without the schema; the server's (hideability, pinned tabs, …) decide when it answers: a refused write leaves
// the queue and the local value goes back to the server's.

extension Customization {
    /// `operations` applied in order, as far as the client can tell their effect.
    public mutating func applyLocally(_ operations: [TabOperation]) {
        for operation in operations { applyLocally(operation) }
    }

    private mutating func applyLocally(_ operation: TabOperation) {
        switch operation {
        case .setSidebarVisibility(let tab, let visibility):
            tabs[tab, default: TabChoice()].sidebarVisibility = visibility
        case .setTabBarVisibility(let tab, let visibility):
            tabs[tab, default: TabChoice()].tabBarVisibility = visibility
        case .setTabOrder(let section, let order):
            sections[section, default: SectionChoice()].tabOrder = order
        case .moveTab(let section, let tab, let toIndex):
            // Only where the section's whole order is known (else the server's answer shows it).
            guard var order = sections[section]?.tabOrder, let from = order.firstIndex(of: tab) else { return }
            order.remove(at: from)
            order.insert(tab, at: max(0, min(toIndex, order.count)))
            sections[section]?.tabOrder = order
        case .setTabBarOrder(let order):
            tabBarOrder = order
        case .setSectionExpanded(let section, let expanded):
            sections[section, default: SectionChoice()].expanded = expanded
        case .setDynamicTabs(let section, let list):
            var all = dynamicTabs ?? [:]
            all[section] = list
            dynamicTabs = all
        case .resetVisibility(let placement):
            for id in tabs.keys {
                if placement != .tabBar { tabs[id]?.sidebarVisibility = .automatic }
                if placement == .tabBar || placement == .all { tabs[id]?.tabBarVisibility = .automatic }
            }
        case .resetSectionOrder(let section):
            for id in sections.keys where section == nil || section == id { sections[id]?.tabOrder = nil }
        case .resetTabBarOrder:
            tabBarOrder = nil
        }
    }
}

extension Customization {
    /// The operations that show this customization's sidebar hides and orders on a layout drawn before it.
    var layoutOperations: [TabOperation] {
        var operations: [TabOperation] = tabs.keys.sorted().filter { tabs[$0]?.sidebarVisibility == .hidden }
            .map { .setSidebarVisibility(tab: $0, visibility: .hidden) }
        for id in sections.keys.sorted() {
            if let order = sections[id]?.tabOrder { operations.append(.setTabOrder(section: id, tabOrder: order)) }
        }
        if let tabBarOrder { operations.append(.setTabBarOrder(tabBarOrder)) }
        return operations
    }
}

extension TabLayout {
    /// `operations` applied where their effect on the drawn layout is plain: a tab hidden in the sidebar leaves
    /// it, a section's tabs and the tab bar take a new order. The rest shows once the server answers.
    public mutating func applyLocally(_ operations: [TabOperation]) {
        for operation in operations {
            switch operation {
            case .setSidebarVisibility(let tab, .hidden) where !sidebar.isEmpty:
                sidebar = sidebar.compactMap { item in
                    switch item {
                    case .tab(let shown): return shown.id == tab ? nil : item
                    case .section(var section):
                        section.tabs.removeAll { $0.id == tab }
                        return .section(section)
                    }
                }
                if !hidden.contains(tab) { hidden.append(tab) }
            case .setTabOrder(let id, let order):
                sidebar = sidebar.map { item in
                    guard case .section(var section) = item, section.id == id else { return item }
                    section.tabs = Self.ordered(section.tabs, by: order)
                    return .section(section)
                }
            case .setTabBarOrder(let order):
                tabBar = Self.ordered(tabBar, by: order)
            default:
                continue
            }
        }
    }

    /// `tabs` in `order`; tabs `order` does not name keep their place after the named ones.
    private static func ordered(_ tabs: [LayoutTab], by order: [TabStoreID]) -> [LayoutTab] {
        let rank = Dictionary(order.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        return tabs.enumerated().sorted { a, b in
            (rank[a.element.id] ?? order.count + a.offset, a.offset) < (rank[b.element.id] ?? order.count + b.offset, b.offset)
        }.map(\.element)
    }
}
