import TabStoreSupport
/// Brings a stored customization up to a newer schema version (DOMAIN.md "Schema changes").
///
/// Entries for ids that no longer exist are dropped, choices the new rules no longer allow fall back to
/// the default, new tabs join customized section orders at the end, and new tab-bar tabs join a
/// customized `tabBarOrder` at the end. Reconciling twice gives the same value as once.
package enum Reconciler {
    package static func reconcile(_ customization: Customization, with index: SchemaIndex) -> Customization {
        var result = customization
        result.tabs = [:]
        for (id, entry) in customization.tabs {
            guard let info = index.tab(id) else { continue }
            var kept = entry
            for placement in Placement.allCases {
                let behavior = index.behavior(of: info, in: placement)
                if kept[placement] == .hidden, !behavior.canHide { kept[placement] = .automatic }
                if kept[placement] == .visible, !behavior.canHide, !index.defaultVisible(info, in: placement) { kept[placement] = .automatic }
            }
            if info.tab.placement == .sidebarOnly, kept.tabBarVisibility == .visible { kept.tabBarVisibility = .automatic }
            result.tabs[id] = kept
        }
        result.sections = [:]
        for (id, entry) in customization.sections {
            guard let section = index.section(id) else { continue }
            var kept = entry
            if let order = entry.tabOrder {
                kept.tabOrder = section.customizationBehavior.sidebar.canMove ? reconcileOrder(order, of: section, index: index) : nil
            }
            result.sections[id] = kept
        }
        var editor = CustomizationEditor(index: index, value: result)
        editor.normalize()
        result = editor.value
        result.schemaVersion = index.version
        return result
    }

    /// Keeps the ids still in the section, in the user's order; appends the section's new tabs;
    /// puts tabs that cannot move back at their builder index.
    static func reconcileOrder(_ order: [Identifier], of section: SchemaSection, index: SchemaIndex) -> [Identifier] {
        var seen = Set<Identifier>()
        var kept = order.filter { id in
            guard seen.insert(id).inserted, let info = index.tab(id) else { return false }
            return info.sectionId == section.id
        }
        for tab in section.tabs where !seen.contains(tab.id) { kept.append(tab.id) }
        let editor = CustomizationEditor(index: index, value: .empty)
        return CustomizationEditor.placing(editor.fixedTabs(of: section), in: kept)
    }

    /// What registering a new schema version would do to the stored customizations.
    package struct Impact: Sendable, Equatable {
        package var customizationsChecked = 0
        package var customizationsAffected = 0
        /// Ids that stored customizations name and the new version no longer has.
        package var droppedIds: Set<Identifier> = []

        package init() {}

        package mutating func add(_ customization: Customization, newIndex: SchemaIndex) {
            customizationsChecked += 1
            let reconciled = reconcile(customization, with: newIndex)
            if !reconciled.sameChoices(as: customization) { customizationsAffected += 1 }
            for id in customization.referencedIds where newIndex.tab(id) == nil && newIndex.section(id) == nil {
                droppedIds.insert(id)
            }
        }
    }
}
