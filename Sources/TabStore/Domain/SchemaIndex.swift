import TabStoreSupport
/// A schema prepared for lookups: built once per schema version and shared read-only.
package struct SchemaIndex: Sendable {
    /// Where a tab id lives in the schema.
    package struct TabInfo: Sendable, Equatable {
        package let tab: SchemaTab
        /// The section holding the tab, nil for a top-level tab.
        package let sectionId: Identifier?
        /// Whether the tab comes from data (a dynamic section's `idPrefix`).
        package let isDynamic: Bool
    }

    package let schema: TabSchema
    package let version: Int
    private let tabs: [Identifier: TabInfo]
    private let sectionsById: [Identifier: SchemaSection]
    private let dynamicSections: [(prefix: Identifier, section: SchemaSection)]
    /// Every static tab in builder order (top-level and in sections).
    package let allTabs: [TabInfo]

    package init(schema: TabSchema, version: Int) {
        self.schema = schema
        self.version = version
        var tabs: [Identifier: TabInfo] = [:]
        var sections: [Identifier: SchemaSection] = [:]
        var dynamic: [(Identifier, SchemaSection)] = []
        var all: [TabInfo] = []
        for item in schema.items {
            switch item {
            case .tab(let tab):
                let info = TabInfo(tab: tab, sectionId: nil, isDynamic: false)
                tabs[tab.id] = info
                all.append(info)
            case .section(let section):
                sections[section.id] = section
                if let prefix = section.dynamicIdPrefix { dynamic.append((prefix, section)) }
                for tab in section.tabs {
                    let info = TabInfo(tab: tab, sectionId: section.id, isDynamic: false)
                    tabs[tab.id] = info
                    all.append(info)
                }
            }
        }
        self.tabs = tabs
        self.sectionsById = sections
        self.dynamicSections = dynamic
        self.allTabs = all
    }

    package func section(_ id: Identifier) -> SchemaSection? { sectionsById[id] }

    /// A static tab, or a tab of a dynamic section whose id matches its prefix.
    package func tab(_ id: Identifier) -> TabInfo? {
        if let info = tabs[id] { return info }
        guard let section = dynamicSection(of: id), let dynamic = section.dynamicTabs else { return nil }
        // A dynamic tab has no declaration of its own: it takes the behavior the section declares for its data
        // tabs (the modifier the app puts on every tab of its ForEach) and the section's defaults; its title
        // comes from the user's stored list (`CustomizationRules.tab(_:in:)`), else from the id.
        let tab = SchemaTab(id: id, title: id.droppingBytes(dynamic.idPrefix.byteCount), customizationBehavior: dynamic.customizationBehavior)
        return TabInfo(tab: tab, sectionId: section.id, isDynamic: true)
    }

    /// The dynamic section whose prefix `id` extends (an id that is only the prefix is no tab's).
    package func dynamicSection(of id: Identifier) -> SchemaSection? {
        for (prefix, section) in dynamicSections where id.byteCount > prefix.byteCount && id.hasBytePrefix(prefix) && id.isValidId {
            return section
        }
        return nil
    }

    /// Whether `id` names a static tab or section of this schema.
    package func containsStatic(_ id: Identifier) -> Bool { tabs[id] != nil || sectionsById[id] != nil }

    /// A section's static tabs with their place, in builder order.
    package func staticTabs(of section: SchemaSection) -> [TabInfo] {
        section.tabs.map { TabInfo(tab: $0, sectionId: section.id, isDynamic: false) }
    }

    /// Every section (and top-level ForEach) in builder order.
    package var sections: [SchemaSection] {
        schema.items.compactMap { item in
            if case .section(let section) = item { return section }
            return nil
        }
    }
}
