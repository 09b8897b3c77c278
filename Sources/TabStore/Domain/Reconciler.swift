import TabStoreSupport
/// Brings a stored customization up to a newer schema version (docs/domain.md "Reconciliation: when the app ships a new schema").
///
/// The user's data-driven lists are kept where the new schema still has their dynamic section (entries whose id
/// no longer extends its prefix are dropped), entries for ids that no longer exist (or that the lists no longer
/// hold) are dropped, choices the new rules no longer allow (`CustomizationRules`, the same that refuse them in a
/// change) fall back to the default, new tabs join customized section orders at the end, and new tab-bar tabs
/// join a customized `tabBarOrder` at the end. Reconciling twice gives the same value as once.
package enum Reconciler {
    package static func reconcile(_ customization: Customization, with index: SchemaIndex) -> Customization {
        let rules = CustomizationRules(index)
        var result = customization
        // The lists first: which data-driven ids exist depends on them.
        rules.pruneDynamicTabs(&result)
        result.tabs = [:]
        for (id, entry) in customization.tabs {
            guard let info = rules.tab(id, in: result), rules.namingRefusal(of: info) == nil else { continue }
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
                kept.tabOrder = rules.reorderRefusal(of: section) == nil ? rules.repairedOrder(order, of: section, in: result) : nil
            }
            // A section that became a top-level ForEach has no header left to open or close.
            if rules.expansionRefusal(of: section) != nil { kept.expanded = nil }
            result.sections[id] = kept
        }
        rules.normalize(&result)
        result.schemaVersion = index.version
        return result
    }

    /// What registering a new schema version would do to the stored customizations.
    package struct Impact: Sendable, Equatable {
        package var customizationsChecked = 0
        package var customizationsAffected = 0
        /// Ids that users' served choices name and the new version no longer has (`UserImpact.droppedIds`).
        package var droppedIds: Set<Identifier> = []
        /// How many stored data-driven tabs (entries of users' lists) the new version drops, over all customizations.
        package var dynamicTabsDropped = 0

        package init() {}

        /// Most ids `droppedIds` collects (the counts stay exact).
        package static let maxDroppedIds = 10_000

        /// Counts `served` (what one user is served now) and tells what the new version changes for them.
        @discardableResult
        package mutating func add(_ served: Customization, newIndex: SchemaIndex) -> UserImpact {
            customizationsChecked += 1
            let user = UserImpact(served: served, reconciled: reconcile(served, with: newIndex), newIndex: newIndex)
            guard !user.isEmpty else { return user }
            customizationsAffected += 1
            dynamicTabsDropped += user.dynamicTabsDropped
            // Bounded: users' data-driven ids could otherwise grow this set with the number of users.
            for id in user.droppedIds where droppedIds.count < Self.maxDroppedIds { droppedIds.insert(id) }
            return user
        }
    }
}
