import TabStoreSupport
extension CustomizationRules {
    // MARK: - A section's tabs and their order

    /// A section's tabs before the user reorders them: its static tabs in builder order, then the user's stored
    /// data-driven tabs in the app's order.
    package func defaultTabs(of section: SchemaSection, in customization: Customization) -> [SchemaIndex.TabInfo] {
        index.staticTabs(of: section) + storedDynamicTabs(of: section, in: customization)
    }

    /// The tabs a section's `tabOrder` lists: all its default tabs but those with derived ids, which no
    /// operation may name (they are disabled, so they keep their builder position anyway).
    package func orderableTabs(of section: SchemaSection, in customization: Customization) -> [SchemaIndex.TabInfo] {
        defaultTabs(of: section, in: customization).filter { !$0.tab.hasDerivedId }
    }

    /// The order a section's `tabOrder` holds: the user's, else the default one.
    package func order(of section: SchemaSection, in customization: Customization) -> [Identifier] {
        customization.sections[section.id]?.tabOrder ?? orderableTabs(of: section, in: customization).map(\.tab.id)
    }

    /// The order a section shows: `order(of:in:)` with the tabs that have derived ids at their builder index.
    package func shownOrder(of section: SchemaSection, in customization: Customization) -> [Identifier] {
        let order = order(of: section, in: customization)
        var derived: [Identifier: Int] = [:]
        for (position, tab) in section.tabs.enumerated() where tab.hasDerivedId { derived[tab.id] = position }
        guard !derived.isEmpty else { return order }
        return Self.placing(derived, in: order + section.tabs.filter(\.hasDerivedId).map(\.id))
    }

    // MARK: - Fixed positions

    /// The orderable tabs of a section that may not move in the sidebar, at their index in the default order.
    package func fixedPositions(of section: SchemaSection, in customization: Customization) -> [Identifier: Int] {
        fixedPositions(of: orderableTabs(of: section, in: customization), in: .sidebar)
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

    /// Whether an order of a section's tabs leaves every tab that cannot move at its default index (the first
    /// displaced one in default order is named), and names no tab that cannot move and has no default place
    /// (a data-driven tab that may not move, before the user's list of the section is stored).
    package func fixedPositionRefusal(of order: [Identifier], in section: SchemaSection, customization: Customization) -> Refusal? {
        let fixed = fixedPositions(of: section, in: customization)
        guard !fixed.isEmpty || order.contains(where: { tab($0, in: customization)?.isDynamic == true }) else { return nil }
        let positions = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for info in orderableTabs(of: section, in: customization) {
            guard let position = fixed[info.tab.id], positions[info.tab.id] != position else { continue }
            let place = info.isDynamic ? "its position \(position) in the section" : "its builder position \(position)"
            return Refusal(code: .notMovable, detail: immovable(info, in: .sidebar) + " and keeps " + place)
        }
        for id in order where fixed[id] == nil {
            if let info = tab(id, in: customization), !canMove(info, in: .sidebar) {
                return Refusal(code: .notMovable, detail: immovable(info, in: .sidebar) + " and cannot be placed")
            }
        }
        return nil
    }

    // MARK: - Keeping stored choices standing

    /// A stored `tabOrder` brought in line with the section as it is now: ids that no longer name one of its
    /// orderable tabs are dropped (a removed tab, a data-driven tab no longer in the user's list, one that may
    /// not move and has no default place), the section's other tabs join at the end, and tabs that cannot move
    /// go back to their default index.
    package func repairedOrder(_ order: [Identifier], of section: SchemaSection, in customization: Customization) -> [Identifier] {
        let fixed = fixedPositions(of: section, in: customization)
        var kept: [Identifier] = []
        var listed = Set<Identifier>()
        for id in order where !listed.contains(id) {
            guard let info = tab(id, in: customization), membershipRefusal(of: info, in: section) == nil, namingRefusal(of: info) == nil,
                fixed[id] != nil || canMove(info, in: .sidebar)
            else { continue }
            kept.append(id)
            listed.insert(id)
        }
        for info in orderableTabs(of: section, in: customization) where !listed.contains(info.tab.id) {
            kept.append(info.tab.id)
            listed.insert(info.tab.id)
        }
        return Self.placing(fixed, in: kept)
    }

    /// Keeps stored choices standing after a change: entries that say nothing are dropped, the user's lists and
    /// the choices about data-driven tabs they no longer hold are pruned, every section `tabOrder` is repaired,
    /// and a customized `tabBarOrder` lists every movable item currently in the bar (a tab added to the bar goes
    /// to its end) and nothing that may not be listed.
    package func normalize(_ customization: inout Customization) {
        pruneDynamicTabs(&customization)
        customization.compact()
        for (id, entry) in customization.sections {
            guard let order = entry.tabOrder, let section = index.section(id) else { continue }
            let repaired = repairedOrder(order, of: section, in: customization)
            customization.sections[id]?.tabOrder = repaired
        }
        guard var order = customization.tabBarOrder else { return }
        var listed = Set<Identifier>()
        order.removeAll { id in
            guard listed.insert(id).inserted, let info = tab(id, in: customization) else { return true }
            return tabBarOrderRefusal(of: info) != nil
        }
        for info in index.allTabs where !listed.contains(info.tab.id) && tabBarOrderRefusal(of: info) == nil
            && isVisible(info, in: .tabBar, customization: customization)
        {
            order.append(info.tab.id)
            listed.insert(info.tab.id)
        }
        customization.tabBarOrder = order
    }
}
