import TabStoreClient

/// The diff/apply engine between a `TabViewCustomizationMembers` value (SwiftUI's `TabViewCustomization`) and
/// TabStore's `Customization`. SwiftUI's type cannot list its ids, so the bridge looks at the tabs and sections it
/// is told of (`tabIDs`, `sectionIDs`) and at every id the served customization names.
public struct TabCustomizationBridge: Sendable, Hashable {
    /// The customizable tabs' customization ids.
    public var tabIDs: [String]
    /// The customizable sections' customization ids.
    public var sectionIDs: [String]

    /// A bridge over these tabs and sections.
    public init(tabIDs: [String] = [], sectionIDs: [String] = []) {
        self.tabIDs = tabIDs
        self.sectionIDs = sectionIDs
    }

    /// The operations that make on the server the edit a person made from `old` to `new` (in SwiftUI's sidebar or
    /// tab bar): a visibility per placement that changed, a section order that changed (`resetSectionOrder` when it
    /// went back to the builder's). Tabs and sections in id order, so one edit always gives the same list.
    public func operations<Value: TabViewCustomizationMembers>(from old: Value, to new: Value, served: Customization? = nil) -> [TabOperation] {
        var operations: [TabOperation] = []
        for id in tabs(served) {
            let before = old[tab: id], after = new[tab: id]
            if before.sidebarVisibility.tabStoreVisibility != after.sidebarVisibility.tabStoreVisibility {
                operations.append(.setSidebarVisibility(tab: TabStoreID(id), visibility: after.sidebarVisibility.tabStoreVisibility))
            }
            if before.tabBarVisibility.tabStoreVisibility != after.tabBarVisibility.tabStoreVisibility {
                operations.append(.setTabBarVisibility(tab: TabStoreID(id), visibility: after.tabBarVisibility.tabStoreVisibility))
            }
        }
        for id in sections(served) {
            let before = old[section: id].tabOrder, after = new[section: id].tabOrder
            guard Self.ids(before) != Self.ids(after) else { continue }
            if let after {
                operations.append(.setTabOrder(section: TabStoreID(id), tabOrder: after.map { TabStoreID($0) }))
            } else {
                operations.append(.resetSectionOrder(section: TabStoreID(id)))
            }
        }
        return operations
    }

    /// The operation for a tab-bar reorder (SwiftUI's type holds no tab-bar order: the app reports it, from its own
    /// editing UI or an `onMove`).
    public func tabBarReordered(to order: [String]) -> [TabOperation] {
        [.setTabBarOrder(order.map { TabStoreID($0) })]
    }

    /// Makes `local` show `served` where SwiftUI has a setter: each sidebar visibility is set; a section whose
    /// order differs from the served one is reset to the builder order (SwiftUI has no order setter; build the
    /// section's tabs in `served` order, see `TabCustomizationSync.orderedTabs(in:builderOrder:)`). The tab-bar
    /// visibilities SwiftUI cannot set are returned: drive them with `defaultVisibility(_:for: .tabBar)`.
    /// - Returns: the tabs whose tab-bar visibility `local` still shows otherwise than `served`.
    @discardableResult
    public func apply<Value: TabViewCustomizationMembers>(_ served: Customization, to local: inout Value) -> [String] {
        var unset: [String] = []
        for id in tabs(served) {
            let choice = served[tab: TabStoreID(id)]
            if local[tab: id].sidebarVisibility.tabStoreVisibility != choice.sidebarVisibility {
                local[tab: id].sidebarVisibility = Value.TabMembers.VisibilityValue(tabStoreVisibility: choice.sidebarVisibility)
            }
            let shown = local[tab: id].tabBarVisibility.tabStoreVisibility
            if shown != .automatic && shown != choice.tabBarVisibility { unset.append(id) }
        }
        for id in sections(served) {
            let order = served.sections[TabStoreID(id)]?.tabOrder
            if let shown = local[section: id].tabOrder, Self.ids(shown) != order { local[section: id].resetTabOrder() }
        }
        return unset
    }

    /// Ids are bytes: a `Set<String>` would merge two spellings Unicode calls equivalent (NFC and NFD), which the
    /// server keeps apart. `TabStoreID` compares, hashes and sorts by UTF-8 bytes.
    private func tabs(_ served: Customization?) -> [String] {
        Set(tabIDs.map { TabStoreID($0) }).union(served?.tabs.keys.map { $0 } ?? []).sorted().map(\.string)
    }

    private func sections(_ served: Customization?) -> [String] {
        Set(sectionIDs.map { TabStoreID($0) }).union(served?.sections.keys.map { $0 } ?? []).sorted().map(\.string)
    }

    private static func ids(_ order: [String]?) -> [TabStoreID]? { order?.map { TabStoreID($0) } }
}
