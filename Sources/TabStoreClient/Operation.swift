import Foundation

/// Which visibilities `resetVisibility` resets.
public enum ResetPlacement: String, Codable, Sendable, Hashable, CaseIterable {
    case sidebar, tabBar, all
}

/// One change a `PATCH` applies (openapi.yaml `Operation`); a list of them applies atomically, in order.
public enum TabOperation: Sendable, Hashable {
    case setSidebarVisibility(tab: TabStoreID, visibility: TabVisibility)
    case setTabBarVisibility(tab: TabStoreID, visibility: TabVisibility)
    /// `tabOrder` names all the section's tabs.
    case setTabOrder(section: TabStoreID, tabOrder: [TabStoreID])
    /// `toIndex`: the tab's position within the section after the move.
    case moveTab(section: TabStoreID, tab: TabStoreID, toIndex: Int)
    case setTabBarOrder([TabStoreID])
    case setSectionExpanded(section: TabStoreID, expanded: Bool)
    /// Stores the person's data-driven tabs of a dynamic section (or a top-level forEach), replacing the list.
    case setDynamicTabs(section: TabStoreID, tabs: [DynamicTab])
    /// nil: the server's default (`sidebar`).
    case resetVisibility(placement: ResetPlacement? = nil)
    /// nil: every section.
    case resetSectionOrder(section: TabStoreID? = nil)
    case resetTabBarOrder

    /// The `op` member's values, in the order openapi.yaml lists the operations.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case setSidebarVisibility, setTabBarVisibility, setTabOrder, moveTab, setTabBarOrder, setSectionExpanded,
             setDynamicTabs, resetVisibility, resetSectionOrder, resetTabBarOrder
    }

    /// Which operation it is.
    public var kind: Kind {
        switch self {
        case .setSidebarVisibility: .setSidebarVisibility
        case .setTabBarVisibility: .setTabBarVisibility
        case .setTabOrder: .setTabOrder
        case .moveTab: .moveTab
        case .setTabBarOrder: .setTabBarOrder
        case .setSectionExpanded: .setSectionExpanded
        case .setDynamicTabs: .setDynamicTabs
        case .resetVisibility: .resetVisibility
        case .resetSectionOrder: .resetSectionOrder
        case .resetTabBarOrder: .resetTabBarOrder
        }
    }
}

extension TabOperation: Codable {
    enum CodingKeys: String, CodingKey {
        case op, tab, visibility, section, tabOrder, toIndex, tabBarOrder, expanded, tabs, placement
    }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .op) {
        case .setSidebarVisibility:
            self = .setSidebarVisibility(tab: try container.decode(TabStoreID.self, forKey: .tab),
                                         visibility: try container.decode(TabVisibility.self, forKey: .visibility))
        case .setTabBarVisibility:
            self = .setTabBarVisibility(tab: try container.decode(TabStoreID.self, forKey: .tab),
                                        visibility: try container.decode(TabVisibility.self, forKey: .visibility))
        case .setTabOrder:
            self = .setTabOrder(section: try container.decode(TabStoreID.self, forKey: .section),
                                tabOrder: try container.decode([TabStoreID].self, forKey: .tabOrder))
        case .moveTab:
            self = .moveTab(
                section: try container.decode(TabStoreID.self, forKey: .section), tab: try container.decode(TabStoreID.self, forKey: .tab),
                            toIndex: try container.decode(Int.self, forKey: .toIndex))
        case .setTabBarOrder:
            self = .setTabBarOrder(try container.decode([TabStoreID].self, forKey: .tabBarOrder))
        case .setSectionExpanded:
            self = .setSectionExpanded(section: try container.decode(TabStoreID.self, forKey: .section),
                                       expanded: try container.decode(Bool.self, forKey: .expanded))
        case .setDynamicTabs:
            self = .setDynamicTabs(section: try container.decode(TabStoreID.self, forKey: .section),
                                   tabs: try container.decode([DynamicTab].self, forKey: .tabs))
        case .resetVisibility:
            self = .resetVisibility(placement: try container.decodeIfPresent(ResetPlacement.self, forKey: .placement))
        case .resetSectionOrder:
            self = .resetSectionOrder(section: try container.decodeIfPresent(TabStoreID.self, forKey: .section))
        case .resetTabBarOrder:
            self = .resetTabBarOrder
        }
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .op)
        switch self {
        case .setSidebarVisibility(let tab, let visibility), .setTabBarVisibility(let tab, let visibility):
            try container.encode(tab, forKey: .tab)
            try container.encode(visibility, forKey: .visibility)
        case .setTabOrder(let section, let tabOrder):
            try container.encode(section, forKey: .section)
            try container.encode(tabOrder, forKey: .tabOrder)
        case .moveTab(let section, let tab, let toIndex):
            try container.encode(section, forKey: .section)
            try container.encode(tab, forKey: .tab)
            try container.encode(toIndex, forKey: .toIndex)
        case .setTabBarOrder(let order):
            try container.encode(order, forKey: .tabBarOrder)
        case .setSectionExpanded(let section, let expanded):
            try container.encode(section, forKey: .section)
            try container.encode(expanded, forKey: .expanded)
        case .setDynamicTabs(let section, let tabs):
            try container.encode(section, forKey: .section)
            try container.encode(tabs, forKey: .tabs)
        case .resetVisibility(let placement):
            try container.encodeIfPresent(placement, forKey: .placement)
        case .resetSectionOrder(let section):
            try container.encodeIfPresent(section, forKey: .section)
        case .resetTabBarOrder:
            break
        }
    }
}

/// The body of a `PATCH` (openapi.yaml `PatchRequest`).
struct PatchRequest: Codable, Sendable {
    let operations: [TabOperation]
}

/// The body of `POST …/revert` (openapi.yaml `RevertRequest`).
struct RevertRequest: Codable, Sendable {
    let toRevision: Int
}
