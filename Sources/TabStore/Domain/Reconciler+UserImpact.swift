import TabStoreSupport

/// What a new schema version changes in what one user is served (docs/domain.md "Reconciliation: when the app
/// ships a new schema"): the served customization under the current version against its reconciliation under
/// the new one. Only losses and resets count: a new tab joining a customized order at its end is no change of
/// the user's choices (every user gets it), nor is a dropped id that only an order listed.
package struct UserImpact: Sendable, Equatable {
    /// Ids the user's choices name (a visibility choice, a section's entry, a data-driven list or one of its
    /// entries) that the new version lacks, sorted by bytes.
    package var droppedIds: [Identifier] = []
    /// Tabs (and sections' expansion) that stay but whose choice falls back to the default, sorted.
    package var visibilityReset: [Identifier] = []
    /// Sections whose customized order the new version changes for the tabs both versions have (or resets), sorted.
    package var ordersChanged: [Identifier] = []
    /// Whether the customized tab-bar order changes (or resets) for the tabs both versions have.
    package var tabBarOrderChanged = false
    /// Entries of the user's data-driven lists the new version drops.
    package var dynamicTabsDropped = 0

    package init() {}

    package var isEmpty: Bool {
        droppedIds.isEmpty && visibilityReset.isEmpty && ordersChanged.isEmpty && !tabBarOrderChanged && dynamicTabsDropped == 0
    }

    /// The change from `served` (what is served now) to `reconciled` (what `newIndex` would serve).
    package init(served: Customization, reconciled: Customization, newIndex: SchemaIndex) {
        let rules = CustomizationRules(newIndex)
        func lacks(_ id: Identifier) -> Bool { rules.tab(id, in: reconciled) == nil && newIndex.section(id) == nil }
        var dropped = Set<Identifier>(), reset = Set<Identifier>(), orders = Set<Identifier>()
        for (id, entry) in served.tabs where !entry.isDefault {
            if lacks(id) { dropped.insert(id); continue }
            let now = reconciled.tabs[id] ?? Customization.TabEntry()
            if Placement.allCases.contains(where: { entry[$0] != .automatic && now[$0] != entry[$0] }) { reset.insert(id) }
        }
        for (id, entry) in served.sections where !entry.isDefault {
            guard newIndex.section(id) != nil else { dropped.insert(id); continue }
            let now = reconciled.sections[id] ?? Customization.SectionEntry()
            if entry.expanded != nil && now.expanded != entry.expanded { reset.insert(id) }
            if let order = entry.tabOrder, Self.orderChanged(order, now.tabOrder) { orders.insert(id) }
        }
        for (section, list) in served.dynamicTabs {
            guard let kept = reconciled.dynamicTabs[section] else {
                // The list goes (its section is gone, or its entries no longer fit the prefix); the section's id is
                // dropped only when the new version lacks it.
                if newIndex.section(section) == nil, !newIndex.schema.items.contains(where: { $0.id == section }) { dropped.insert(section) }
                dynamicTabsDropped += list.count
                for tab in list.tabs { dropped.insert(tab.id) }
                continue
            }
            for tab in list.tabs where kept.tab(tab.id) == nil {
                dynamicTabsDropped += 1
                dropped.insert(tab.id)
            }
        }
        if let order = served.tabBarOrder { tabBarOrderChanged = Self.orderChanged(order, reconciled.tabBarOrder) }
        droppedIds = dropped.sorted()
        visibilityReset = reset.sorted()
        ordersChanged = orders.sorted()
    }

    /// Whether a customized order changes beyond ids joining or leaving it: reset to the builder's order, or
    /// the ids both orders hold in another relative order.
    static func orderChanged(_ before: [Identifier], _ after: [Identifier]?) -> Bool {
        guard let after else { return true }
        let beforeIds = Set(before), afterIds = Set(after)
        return !before.filter { afterIds.contains($0) }.elementsEqual(after.filter { beforeIds.contains($0) })
    }
}
