import TabStoreSupport
/// Every customization rule of one schema version (DOMAIN.md section 2), in one place: what a tab shows in
/// each placement, which positions are fixed, and whether a choice may stand. The editor asks before it
/// accepts a change, the reconciler before it keeps a stored choice under a new schema, and the layout when
/// it resolves what a device shows, so no rule has a second copy that could drift.
package struct CustomizationRules: Sendable {
    /// A rule that refuses a choice: its code and a sentence naming the tab or section. Where the choice
    /// was made (an operation, a document entry) is the caller's to add.
    package struct Refusal: Sendable, Equatable {
        package let code: ViolationCode
        package let detail: String
    }

    package let index: SchemaIndex

    package init(_ index: SchemaIndex) { self.index = index }

    // MARK: - Behaviors

    /// The behavior that governs a tab in a placement. A section's behavior governs its children
    /// (seed 000): `disabled` on the section fixes them (no hiding, no moving); `reorderable` lets them
    /// move and leaves hiding to each tab's own behavior (API.md hides a tab of a reorderable section).
    package func behavior(of info: SchemaIndex.TabInfo, in placement: Placement) -> CustomizationBehavior {
        if let sectionId = info.sectionId, let section = index.section(sectionId), section.customizationBehavior[placement] == .disabled {
            return .disabled
        }
        return info.tab.customizationBehavior[placement]
    }

    /// Whether a tab may leave its default position in a placement (`automatic` or `reorderable`).
    package func canMove(_ info: SchemaIndex.TabInfo, in placement: Placement) -> Bool { behavior(of: info, in: placement).canMove }

    /// Whether a section's tabs may be reordered in the sidebar: its sidebar behavior is not `disabled`.
    package func canReorder(_ section: SchemaSection) -> Bool { section.customizationBehavior.sidebar.canMove }

    // MARK: - Visibility

    /// The schema's default visibility of a tab in a placement, before any customization: the tab's own
    /// default, else its section's; a `sidebarOnly` tab is never in the tab bar.
    package func isVisibleByDefault(_ info: SchemaIndex.TabInfo, in placement: Placement) -> Bool {
        if placement == .tabBar, info.tab.placement == .sidebarOnly { return false }
        var visibility = info.tab.defaultVisibility[placement]
        if visibility == .automatic, let sectionId = info.sectionId, let section = index.section(sectionId) {
            visibility = section.defaultVisibility[placement]
        }
        return visibility != .hidden
    }

    /// Whether a tab shows in a placement for this customization (before size-class rules).
    package func isVisible(_ info: SchemaIndex.TabInfo, in placement: Placement, customization: Customization) -> Bool {
        let entry = customization.tabs[info.tab.id] ?? Customization.TabEntry()
        if placement == .tabBar {
            if info.tab.placement == .sidebarOnly { return false }
            // Apple's coupling: hiding a tab in the sidebar hides it in the tab bar too.
            if entry.sidebarVisibility == .hidden { return false }
        }
        switch entry[placement] {
        case .visible: return true
        case .hidden: return false
        case .automatic: return isVisibleByDefault(info, in: placement)
        }
    }

    /// How many of the schema's static tabs show in each placement.
    package func visibleCounts(_ customization: Customization) -> PerPlacement<Int> {
        var counts = PerPlacement(sidebar: 0, tabBar: 0)
        for info in index.allTabs {
            for placement in Placement.allCases where isVisible(info, in: placement, customization: customization) {
                counts[placement] += 1
            }
        }
        return counts
    }

    // MARK: - Fixed positions

    /// The effective order of a section's tabs: the user's, or the builder's.
    package func order(of section: SchemaSection, in customization: Customization) -> [Identifier] {
        customization.sections[section.id]?.tabOrder ?? index.builderOrder(of: section)
    }

    /// The section's tabs that may not move in the sidebar, at their builder index.
    package func fixedPositions(of section: SchemaSection) -> [Identifier: Int] {
        fixedPositions(of: section.tabs.map { SchemaIndex.TabInfo(tab: $0, sectionId: section.id, isDynamic: false) }, in: .sidebar)
    }

    /// The items of a default list that may not move in a placement, at their index in that list.
    package func fixedPositions(of items: [SchemaIndex.TabInfo], in placement: Placement) -> [Identifier: Int] {
        var fixed: [Identifier: Int] = [:]
        for (position, info) in items.enumerated() where !canMove(info, in: placement) { fixed[info.tab.id] = position }
        return fixed
    }

    /// Puts fixed ids back at their index, the others in the given order around them.
    package static func placing(_ fixed: [Identifier: Int], in order: [Identifier]) -> [Identifier] {
        guard !fixed.isEmpty else { return order }
        var movable = order.filter { fixed[$0] == nil }[...]
        var slots = [Identifier?](repeating: nil, count: order.count)
        let present = Set(order)
        for (id, position) in fixed where position < slots.count && present.contains(id) { slots[position] = id }
        for slot in slots.indices where slots[slot] == nil {
            slots[slot] = movable.popFirst()
        }
        return slots.compactMap { $0 }
    }

    // MARK: - May a choice stand

    /// Whether a tab may have this visibility in a placement. `automatic` always stands; hiding needs
    /// behavior `automatic`; showing a tab the schema hides by default needs it too; a `sidebarOnly` tab
    /// is never shown in the tab bar.
    package func refusal(of visibility: Visibility, for info: SchemaIndex.TabInfo, in placement: Placement) -> Refusal? {
        let id = info.tab.id
        let behavior = behavior(of: info, in: placement)
        if placement == .tabBar, visibility == .visible, info.tab.placement == .sidebarOnly {
            return Refusal(code: .sidebarOnly, detail: "tab \"\(id)\" is sidebarOnly and can never be shown in the tab bar")
        }
        if visibility == .hidden, !behavior.canHide {
            return Refusal(code: .notHideable, detail: "tab \"\(id)\" has customization behavior \"\(behavior.rawValue)\" in the \(placement.rawValue) and cannot be hidden")
        }
        if visibility == .visible, !behavior.canHide, !isVisibleByDefault(info, in: placement) {
            return Refusal(code: .customizationDisabled, detail: "tab \"\(id)\" has customization behavior \"\(behavior.rawValue)\" in the \(placement.rawValue) and cannot be added")
        }
        return nil
    }

    /// Whether a section may have a `tabOrder` of the user's.
    package func reorderRefusal(of section: SchemaSection) -> Refusal? {
        canReorder(section) ? nil
            : Refusal(code: .customizationDisabled, detail: "section \"\(section.id)\" has customization behavior \"disabled\" in the sidebar and cannot be reordered")
    }

    /// Whether a tab may take part in a section's order: in the sidebar tabs reorder only within their section.
    package func membershipRefusal(of info: SchemaIndex.TabInfo, in section: SchemaSection) -> Refusal? {
        info.sectionId == section.id ? nil
            : Refusal(code: .crossSectionMove, detail: "tab \"\(info.tab.id)\" is not in section \"\(section.id)\"; in the sidebar tabs reorder only within their section")
    }

    /// Whether a tab of a section may be moved in the sidebar.
    package func moveRefusal(of info: SchemaIndex.TabInfo) -> Refusal? {
        canMove(info, in: .sidebar) ? nil
            : Refusal(code: .notMovable, detail: "tab \"\(info.tab.id)\" has customization behavior \"disabled\" in the sidebar and cannot be moved")
    }

    /// Whether an order of a section's tabs leaves every tab that cannot move at its builder index
    /// (the first displaced one in builder order is named).
    package func fixedPositionRefusal(of order: [Identifier], in section: SchemaSection) -> Refusal? {
        let fixed = fixedPositions(of: section)
        for tab in section.tabs {
            guard let position = fixed[tab.id], order.firstIndex(of: tab.id) != position else { continue }
            return Refusal(code: .notMovable, detail: "tab \"\(tab.id)\" has customization behavior \"disabled\" in the sidebar and keeps its builder position \(position)")
        }
        return nil
    }

    /// Whether a tab may be listed in a `tabBarOrder`: pinned tabs are never reordered, `sidebarOnly` tabs
    /// are never in the bar, and a tab whose tab-bar behavior is `disabled` keeps its default position.
    package func tabBarOrderRefusal(of info: SchemaIndex.TabInfo) -> Refusal? {
        let id = info.tab.id
        if info.tab.isPinned { return Refusal(code: .pinnedTab, detail: "tab \"\(id)\" is pinned and is never reordered") }
        if info.tab.placement == .sidebarOnly { return Refusal(code: .sidebarOnly, detail: "tab \"\(id)\" is sidebarOnly and is never in the tab bar") }
        if !canMove(info, in: .tabBar) {
            return Refusal(code: .notMovable, detail: "tab \"\(id)\" has customization behavior \"disabled\" in the tab bar and keeps its default position")
        }
        return nil
    }

    /// Whether a change from `before` to `after` may stand: it may not leave a placement that showed a tab
    /// with none (DOMAIN.md: "A change may not leave the user with no visible tab").
    package func noVisibleTabRefusal(from before: Customization, to after: Customization) -> Refusal? {
        let was = visibleCounts(before)
        let now = visibleCounts(after)
        for placement in Placement.allCases where now[placement] == 0 && was[placement] > 0 {
            return Refusal(code: .noVisibleTab, detail: "the change would leave no visible tab in the \(placement.rawValue)")
        }
        return nil
    }

    // MARK: - Keeping stored choices standing

    /// Keeps a customized `tabBarOrder` listing every movable item currently in the bar (a tab added to the
    /// bar goes to its end) and nothing that may not be listed; drops entries that say nothing.
    package func normalize(_ customization: inout Customization) {
        customization.compact()
        guard var order = customization.tabBarOrder else { return }
        order.removeAll { id in
            guard let info = index.tab(id) else { return true }
            return tabBarOrderRefusal(of: info) != nil
        }
        var listed = Set(order)
        for info in index.allTabs where !listed.contains(info.tab.id) && tabBarOrderRefusal(of: info) == nil
            && isVisible(info, in: .tabBar, customization: customization)
        {
            order.append(info.tab.id)
            listed.insert(info.tab.id)
        }
        customization.tabBarOrder = order
    }
}
