import TabStoreSupport
/// Brings a stored customization up to a newer schema version (DOMAIN.md "Schema changes").
///
/// Entries for ids that no longer exist are dropped, choices the new rules no longer allow
/// (`CustomizationRules`, the same that refuse them in a change) fall back to the default, new tabs join
/// customized section orders at the end, and new tab-bar tabs join a customized `tabBarOrder` at the end.
/// Reconciling twice gives the same value as once.
package enum Reconciler {
    package static func reconcile(_ customization: Customization, with index: SchemaIndex) -> Customization {
        let rules = CustomizationRules(index)
        var result = customization
        result.tabs = [:]
        for (id, entry) in customization.tabs {
            guard let info = index.tab(id) else { continue }
            var kept = entry
            for placement in Placement.allCases where rules.refusal(of: kept[placement], for: info, in: placement) != nil {
                kept[placement] = .automatic
            }
            result.tabs[id] = kept
        }
        result.sections = [:]
        for (id, entry) in customization.sections {
            guard let section = index.section(id) else { continue }
            var kept = entry
            if let order = entry.tabOrder {
                kept.tabOrder = rules.reorderRefusal(of: section) == nil ? reconcileOrder(order, of: section, rules: rules) : nil
            }
            result.sections[id] = kept
        }
        rules.normalize(&result)
        result.schemaVersion = index.version
        return result
    }

    /// Keeps the ids still in the section, in the user's order; appends the section's new tabs;
    /// puts tabs that cannot move back at their builder index.
    static func reconcileOrder(_ order: [Identifier], of section: SchemaSection, rules: CustomizationRules) -> [Identifier] {
        var seen = Set<Identifier>()
        var kept = order.filter { id in
            guard seen.insert(id).inserted, let info = rules.index.tab(id) else { return false }
            return rules.membershipRefusal(of: info, in: section) == nil
        }
        for tab in section.tabs where !seen.contains(tab.id) { kept.append(tab.id) }
        return CustomizationRules.placing(rules.fixedPositions(of: section), in: kept)
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
