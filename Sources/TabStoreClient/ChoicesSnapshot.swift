import Foundation

/// What a person sees as their choices at one moment: each tab's visibilities and each section's tab order.
/// An app fills one from SwiftUI's `TabViewCustomization` (docs/client.md "SwiftUI") before and after an edit, and
/// `operations(to:)` turns the difference into the operations that make the same edit on the server.
public struct ChoicesSnapshot: Sendable, Hashable {
    /// Per tab id; a tab not listed is `automatic` in both placements.
    public var tabs: [TabStoreID: TabChoice]
    /// Per section id: the order of all its tabs; a section not listed keeps the order it has.
    public var tabOrders: [TabStoreID: [TabStoreID]]

    /// A value with these members.
    public init(tabs: [TabStoreID: TabChoice] = [:], tabOrders: [TabStoreID: [TabStoreID]] = [:]) {
        self.tabs = tabs
        self.tabOrders = tabOrders
    }

    /// The choices a stored customization holds.
    public init(_ customization: Customization) {
        tabs = customization.tabs
        tabOrders = customization.sections.compactMapValues(\.tabOrder)
    }

    /// The operations that turn these choices into `new`, tabs and sections in id (byte) order so that the same edit
    /// always gives the same list: a visibility per placement that changed, and a section order that changed.
    public func operations(to new: ChoicesSnapshot) -> [TabOperation] {
        var operations: [TabOperation] = []
        for id in Set(tabs.keys).union(new.tabs.keys).sorted() {
            let before = tabs[id] ?? TabChoice()
            let after = new.tabs[id] ?? TabChoice()
            if before.sidebarVisibility != after.sidebarVisibility {
                operations.append(.setSidebarVisibility(tab: id, visibility: after.sidebarVisibility))
            }
            if before.tabBarVisibility != after.tabBarVisibility {
                operations.append(.setTabBarVisibility(tab: id, visibility: after.tabBarVisibility))
            }
        }
        for section in new.tabOrders.keys.sorted() {
            guard let order = new.tabOrders[section], order != tabOrders[section] else { continue }
            operations.append(.setTabOrder(section: section, tabOrder: order))
        }
        return operations
    }
}
