import TabStoreSupport
/// SwiftUI's `AdaptableTabBarPlacement`: where a customization applies.
package enum Placement: String, Sendable, CaseIterable {
    case sidebar, tabBar
}

/// SwiftUI's `TabCustomizationBehavior`.
package enum CustomizationBehavior: String, Sendable, CaseIterable, Comparable {
    case automatic, reorderable, disabled

    /// Hiding (or adding) needs full customization.
    package var canHide: Bool { self == .automatic }
    /// Moving needs `automatic` or `reorderable`.
    package var canMove: Bool { self != .disabled }

    private var strictness: Int {
        switch self {
        case .automatic: 0
        case .reorderable: 1
        case .disabled: 2
        }
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.strictness < rhs.strictness }
}

/// SwiftUI's `Visibility`: `automatic` means "not customized, use the default".
package enum Visibility: String, Sendable, CaseIterable {
    case automatic, visible, hidden
}

/// Where a tab may appear.
package enum TabPlacement: String, Sendable, CaseIterable {
    case automatic, pinned, sidebarOnly
}

package enum TabRole: String, Sendable, CaseIterable {
    case search
}

/// The horizontal size class a layout is resolved for.
package enum SizeClass: String, Sendable, CaseIterable {
    case compact, regular
}

/// The platform a client runs on (docs/domain.md "Platforms and styles"): it decides the layout's shape and whether the
/// user's choices apply.
package enum Platform: String, Sendable, CaseIterable {
    case iOS, iPadOS, macOS, visionOS, tvOS
}

/// SwiftUI's `TabViewStyle` a client uses: `sidebarAdaptable` supports customization (on iPadOS),
/// `tabBarOnly` never shows a sidebar.
package enum TabViewStyle: String, Sendable, CaseIterable {
    case sidebarAdaptable, tabBarOnly
}

/// A value for each placement.
package struct PerPlacement<Value: Sendable & Equatable>: Sendable, Equatable {
    package var sidebar: Value
    package var tabBar: Value

    package init(sidebar: Value, tabBar: Value) {
        self.sidebar = sidebar
        self.tabBar = tabBar
    }

    package subscript(placement: Placement) -> Value {
        get { placement == .sidebar ? sidebar : tabBar }
        set { if placement == .sidebar { sidebar = newValue } else { tabBar = newValue } }
    }
}

/// One `Tab` of the app's `TabView` builder.
package struct SchemaTab: Sendable, Equatable {
    /// The customization ID, or for a tab registered without one the id the service derived (`DerivedId`).
    package var id: Identifier
    /// Whether `id` was derived: the tab has no customization ID, so no operation may name it (docs/domain.md "Tabs without an id").
    package var hasDerivedId: Bool
    package var title: String
    package var systemImage: String?
    package var image: String?
    package var role: TabRole?
    package var placement: TabPlacement
    package var customizationBehavior: PerPlacement<CustomizationBehavior>
    package var defaultVisibility: PerPlacement<Visibility>
    package var hiddenIn: [SizeClass]
    /// The tab a client selects instead where `hiddenIn` hides this one (a Browse tab shown only on iPhone, say).
    package var standIn: Identifier?

    package init(
        id: Identifier, hasDerivedId: Bool = false, title: String, systemImage: String? = nil, image: String? = nil, role: TabRole? = nil,
        placement: TabPlacement = .automatic,
        customizationBehavior: PerPlacement<CustomizationBehavior> = .init(sidebar: .automatic, tabBar: .automatic),
        defaultVisibility: PerPlacement<Visibility> = .init(sidebar: .automatic, tabBar: .automatic),
        hiddenIn: [SizeClass] = [], standIn: Identifier? = nil
    ) {
        self.id = id
        self.hasDerivedId = hasDerivedId
        self.title = title
        self.systemImage = systemImage
        self.image = image
        self.role = role
        self.placement = placement
        self.customizationBehavior = customizationBehavior
        self.defaultVisibility = defaultVisibility
        self.hiddenIn = hiddenIn
        self.standIn = standIn
    }

    /// A search tab is pinned whatever its declared placement (SwiftUI puts it at the trailing end).
    package var isPinned: Bool { placement == .pinned || role == .search }
}

/// A section's tabs that come from data (`ForEach` over a user's playlists or collections).
package struct DynamicTabs: Sendable, Equatable {
    /// Every id of such a tab starts with this prefix.
    package var idPrefix: Identifier
    /// The behavior the app gives every tab of its `ForEach` (default `automatic`). For a dynamic tab
    /// `automatic` allows hiding but not moving (tabs built with `ForEach` cannot be dragged by
    /// default), `reorderable` allows moving, `disabled` neither (`CustomizationRules`).
    package var customizationBehavior: PerPlacement<CustomizationBehavior>

    package init(idPrefix: Identifier, customizationBehavior: PerPlacement<CustomizationBehavior> = .init(sidebar: .automatic, tabBar: .automatic)) {
        self.idPrefix = idPrefix
        self.customizationBehavior = customizationBehavior
    }

    /// Most tabs a user's stored list of one section holds (docs/api.md "Operations (PATCH)", `setDynamicTabs`).
    package static let maxTabs = 500
}

/// A group of tabs with an id that operations name: a `TabSection` (tabs only, never nested sections), or a
/// `ForEach` of tabs placed directly in the `TabView` (docs/domain.md "A top-level ForEach":
/// for a dynamic set of tabs TabView accepts ForEach directly inside). The rules treat both alike (a stored list of data-driven tabs, an order of its
/// own); the
/// layout does not: a ForEach has no header, and its tabs are top-level tabs at its position (`Layout`).
package struct SchemaSection: Sendable, Equatable {
    /// What the group is in the app's builder (the schema item's `kind`).
    package enum Kind: String, Sendable, CaseIterable {
        /// A `TabSection`: a header (its title) over its tabs in the sidebar; on iPhone its tabs go to More.
        case section
        /// A `ForEach` directly in the `TabView`: no title, no header, no tabs of its own, only data-driven tabs
        /// (`dynamicTabs`), which are top-level tabs.
        case forEach
    }

    package var kind: Kind
    package var id: Identifier
    package var title: String
    package var customizationBehavior: PerPlacement<CustomizationBehavior>
    package var defaultVisibility: PerPlacement<Visibility>
    package var hiddenIn: [SizeClass]
    /// The tab a client selects instead of this section's tabs where `hiddenIn` hides the section.
    package var standIn: Identifier?
    /// Whether the sidebar shows the section open until the user collapses or opens it (default `true`).
    package var expanded: Bool
    /// Tabs that come from data, when the section has them.
    package var dynamicTabs: DynamicTabs?
    package var tabs: [SchemaTab]

    package init(
        id: Identifier, title: String,
        customizationBehavior: PerPlacement<CustomizationBehavior> = .init(sidebar: .automatic, tabBar: .automatic),
        defaultVisibility: PerPlacement<Visibility> = .init(sidebar: .automatic, tabBar: .automatic),
        hiddenIn: [SizeClass] = [], standIn: Identifier? = nil, expanded: Bool = true, dynamicTabs: DynamicTabs? = nil, tabs: [SchemaTab]
    ) {
        self.kind = .section
        self.id = id
        self.title = title
        self.customizationBehavior = customizationBehavior
        self.defaultVisibility = defaultVisibility
        self.hiddenIn = hiddenIn
        self.standIn = standIn
        self.expanded = expanded
        self.dynamicTabs = dynamicTabs
        self.tabs = tabs
    }

    /// A top-level `ForEach` of data-driven tabs: what a section without a title, tabs or expansion of its own is.
    /// `defaultVisibility` applies to its tabs (a modifier on the `ForEach`'s `Tab`), as a section's does.
    package static func forEach(
        id: Identifier, dynamicTabs: DynamicTabs,
        defaultVisibility: PerPlacement<Visibility> = .init(sidebar: .automatic, tabBar: .automatic),
        hiddenIn: [SizeClass] = [], standIn: Identifier? = nil
    ) -> SchemaSection {
        var group = SchemaSection(id: id, title: "", defaultVisibility: defaultVisibility, hiddenIn: hiddenIn, standIn: standIn,
                                  dynamicTabs: dynamicTabs, tabs: [])
        group.kind = .forEach
        return group
    }

    /// Whether this is a top-level `ForEach` rather than a `TabSection`.
    package var isForEach: Bool { kind == .forEach }

    /// How refusals name the group: "section \"id\"" or "forEach \"id\"".
    package var named: String { "\(kind.rawValue) \"\(id)\"" }

    /// The prefix of the section's data-driven tab ids, when it has them.
    package var dynamicIdPrefix: Identifier? { dynamicTabs?.idPrefix }
}

/// A top-level item of the builder.
package enum SchemaItem: Sendable, Equatable {
    case tab(SchemaTab)
    case section(SchemaSection)

    package var id: Identifier {
        switch self {
        case .tab(let tab): tab.id
        case .section(let section): section.id
        }
    }
}

/// The ordered items of an app's `TabView` builder, as the app registered them.
package struct TabSchema: Sendable, Equatable {
    package var items: [SchemaItem]
    /// Platforms where the app applies a user's choices besides Apple's own (iPadOS with `sidebarAdaptable`),
    /// e.g. an app that shares one person's tabs across its iPhone, Mac, web and Android clients.
    package var customizablePlatforms: [Platform]

    package init(items: [SchemaItem], customizablePlatforms: [Platform] = []) {
        self.items = items
        self.customizablePlatforms = customizablePlatforms
    }

    /// Whether registering `other` over this schema would store nothing new: equal in every field and served
    /// as the same bytes. `==` alone is not enough: it compares titles and image names as `String`s, so two
    /// that differ only in Unicode normalization would be called equal and the registration dropped.
    package func isIdentical(to other: TabSchema) -> Bool {
        self == other && JSONWriter.bytes(json()) == JSONWriter.bytes(other.json())
    }

    package static let maxItems = 500
    /// Longest title (and image name), in UTF-8 bytes.
    package static let maxTitleBytes = 1024
}
