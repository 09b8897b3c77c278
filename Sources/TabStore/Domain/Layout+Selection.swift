import TabStoreSupport
extension Layout {
    /// Every tab the layout does not show, with the tab a client selects instead (when an app hides a tab,
    /// it must update the TabView's selection; docs/domain.md "Layout: what the TabView shows"): the tab's `standIn`, else its section's, when that
    /// one is
    /// shown; else the first tab the layout shows (the sidebar's first where there is a sidebar, else the bar's,
    /// More's, then the pinned ones). Not shown means left out in this size class (`hiddenIn`), hidden by the
    /// user, or kept out by the schema's default visibility. In builder order; empty when nothing is shown.
    static func fallbacks(for layout: Layout, index: SchemaIndex, rules: CustomizationRules, customization: Customization) -> [Fallback] {
        let shownInOrder = layout.shownTabs
        guard let first = shownInOrder.first?.id else { return [] }
        let shown = Set(shownInOrder.map(\.id))
        var fallbacks: [Fallback] = []
        func add(_ id: Identifier, standIns: [Identifier?]) {
            guard !shown.contains(id) else { return }
            let standIn = standIns.compactMap { $0 }.first { shown.contains($0) }
            fallbacks.append(Fallback(hidden: id, select: standIn ?? first))
        }
        for item in index.schema.items {
            switch item {
            case .tab(let tab):
                add(tab.id, standIns: [tab.standIn])
            case .section(let section):
                for id in rules.shownOrder(of: section, in: customization) {
                    guard let info = rules.tab(id, in: customization) else { continue }
                    add(id, standIns: [info.isDynamic ? nil : info.tab.standIn, section.standIn])
                }
            }
        }
        return fallbacks
    }
}
