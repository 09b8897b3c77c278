import TabStoreSupport
/// A user's `TabViewCustomization`, with what Apple keeps private made first-class (docs/domain.md "Customization: what a person chose").
package struct Customization: Sendable, Equatable {
    /// Per-tab visibility choices; `automatic` means "use the schema default".
    package struct TabEntry: Sendable, Equatable {
        package var sidebarVisibility: Visibility = .automatic
        package var tabBarVisibility: Visibility = .automatic

        package init(sidebarVisibility: Visibility = .automatic, tabBarVisibility: Visibility = .automatic) {
            self.sidebarVisibility = sidebarVisibility
            self.tabBarVisibility = tabBarVisibility
        }

        package subscript(placement: Placement) -> Visibility {
            get { placement == .sidebar ? sidebarVisibility : tabBarVisibility }
            set { if placement == .sidebar { sidebarVisibility = newValue } else { tabBarVisibility = newValue } }
        }

        var isDefault: Bool { sidebarVisibility == .automatic && tabBarVisibility == .automatic }
    }

    /// Per-section choices.
    package struct SectionEntry: Sendable, Equatable {
        /// Absent: builder order. Present: the order of all of the section's tabs.
        package var tabOrder: [Identifier]?
        /// Sidebar collapse state; absent means expanded.
        package var expanded: Bool?

        package init(tabOrder: [Identifier]? = nil, expanded: Bool? = nil) {
            self.tabOrder = tabOrder
            self.expanded = expanded
        }

        var isDefault: Bool { tabOrder == nil && expanded == nil }
    }

    /// One tab of a user's data-driven list (docs/api.md "Operations (PATCH)", `setDynamicTabs`): what a client needs to draw it.
    package struct DynamicTab: Sendable, Equatable {
        package var id: Identifier
        package var title: String
        package var systemImage: String?
        package var image: String?

        package init(id: Identifier, title: String, systemImage: String? = nil, image: String? = nil) {
            self.id = id
            self.title = title
            self.systemImage = systemImage
            self.image = image
        }

        /// By bytes, every field: a title sent in another Unicode normalization is another title (a write that
        /// only changes it is a change, stored as sent), never equal by canonical equivalence.
        package static func == (lhs: DynamicTab, rhs: DynamicTab) -> Bool {
            lhs.id == rhs.id && Identifier(lhs.title) == Identifier(rhs.title)
                && lhs.systemImage.map { Identifier($0) } == rhs.systemImage.map { Identifier($0) }
                && lhs.image.map { Identifier($0) } == rhs.image.map { Identifier($0) }
        }
    }

    /// A user's list of data-driven tabs for one section, in the app's order, with its ids indexed so a lookup
    /// stays constant-time however long the list (the layout and the rules look every listed id up).
    package struct DynamicTabList: Sendable, Equatable, ExpressibleByArrayLiteral {
        package let tabs: [DynamicTab]
        private let positions: [Identifier: Int]

        package init(_ tabs: [DynamicTab]) {
            self.tabs = tabs
            var positions: [Identifier: Int] = [:]
            for (position, tab) in tabs.enumerated() where positions[tab.id] == nil { positions[tab.id] = position }
            self.positions = positions
        }

        package init(arrayLiteral tabs: DynamicTab...) { self.init(tabs) }

        /// The listed tab with this id (the first, should a stored list repeat one).
        package func tab(_ id: Identifier) -> DynamicTab? { positions[id].map { tabs[$0] } }

        package var count: Int { tabs.count }

        package static func == (lhs: Self, rhs: Self) -> Bool { lhs.tabs == rhs.tabs }
    }

    package var revision: Int
    package var schemaVersion: Int
    package var updatedAt: String?
    package var tabs: [Identifier: TabEntry]
    package var sections: [Identifier: SectionEntry]
    /// The order of the customizable tab-bar items; nil until the user reorders the bar.
    package var tabBarOrder: [Identifier]?
    /// Per dynamic section, the user's data-driven tabs in the app's order, once a client stored them. An
    /// empty list is stored too: it says the user has none (and every id of the section is then unknown).
    package var dynamicTabs: [Identifier: DynamicTabList]

    package init(
        revision: Int = 0, schemaVersion: Int = 0, updatedAt: String? = nil,
        tabs: [Identifier: TabEntry] = [:], sections: [Identifier: SectionEntry] = [:], tabBarOrder: [Identifier]? = nil,
        dynamicTabs: [Identifier: DynamicTabList] = [:]
    ) {
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.updatedAt = updatedAt
        self.tabs = tabs
        self.sections = sections
        self.tabBarOrder = tabBarOrder
        self.dynamicTabs = dynamicTabs
    }

    /// The customization a user has before any change: everything follows the schema.
    package static let empty = Customization()

    /// Whether the user-owned parts equal another's (ignoring revision, schema version and time).
    package func sameChoices(as other: Customization) -> Bool {
        tabs == other.tabs && sections == other.sections && tabBarOrder == other.tabBarOrder && dynamicTabs == other.dynamicTabs
    }

    /// Only the user's data (the data-driven tabs), none of their choices: what a layout follows where
    /// customization does not apply (docs/domain.md "Platforms and styles").
    package var dataOnly: Customization {
        Customization(revision: revision, schemaVersion: schemaVersion, updatedAt: updatedAt, dynamicTabs: dynamicTabs)
    }

    /// Drops entries that say nothing, so equal choices have one stored form.
    mutating func compact() {
        tabs = tabs.filter { !$0.value.isDefault }
        sections = sections.filter { !$0.value.isDefault }
    }

    /// Every id the customization names.
    package var referencedIds: Set<Identifier> {
        var ids = Set(tabs.keys).union(sections.keys)
        for entry in sections.values { ids.formUnion(entry.tabOrder ?? []) }
        ids.formUnion(tabBarOrder ?? [])
        ids.formUnion(dynamicTabs.keys)
        for list in dynamicTabs.values { ids.formUnion(list.tabs.map(\.id)) }
        return ids
    }

    /// Limits that keep a document bounded even with dynamic tabs (ids that come from data).
    package static let maxTabEntries = 2_000
    package static let maxOrderLength = 2_000
}
