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
    package var id: Identifier
    package var title: String
    package var systemImage: String?
    package var image: String?
    package var role: TabRole?
    package var placement: TabPlacement
    package var customizationBehavior: PerPlacement<CustomizationBehavior>
    package var defaultVisibility: PerPlacement<Visibility>
    package var hiddenIn: [SizeClass]

    package init(
        id: Identifier, title: String, systemImage: String? = nil, image: String? = nil, role: TabRole? = nil,
        placement: TabPlacement = .automatic,
        customizationBehavior: PerPlacement<CustomizationBehavior> = .init(sidebar: .automatic, tabBar: .automatic),
        defaultVisibility: PerPlacement<Visibility> = .init(sidebar: .automatic, tabBar: .automatic),
        hiddenIn: [SizeClass] = []
    ) {
        self.id = id
        self.title = title
        self.systemImage = systemImage
        self.image = image
        self.role = role
        self.placement = placement
        self.customizationBehavior = customizationBehavior
        self.defaultVisibility = defaultVisibility
        self.hiddenIn = hiddenIn
    }

    /// A search tab is pinned whatever its declared placement (SwiftUI puts it at the trailing end).
    package var isPinned: Bool { placement == .pinned || role == .search }
}

/// One `TabSection`: tabs only, never nested sections.
package struct SchemaSection: Sendable, Equatable {
    package var id: Identifier
    package var title: String
    package var customizationBehavior: PerPlacement<CustomizationBehavior>
    package var defaultVisibility: PerPlacement<Visibility>
    package var hiddenIn: [SizeClass]
    /// Tabs that come from data (`ForEach`): their ids start with this prefix.
    package var dynamicIdPrefix: Identifier?
    package var tabs: [SchemaTab]

    package init(
        id: Identifier, title: String,
        customizationBehavior: PerPlacement<CustomizationBehavior> = .init(sidebar: .automatic, tabBar: .automatic),
        defaultVisibility: PerPlacement<Visibility> = .init(sidebar: .automatic, tabBar: .automatic),
        hiddenIn: [SizeClass] = [], dynamicIdPrefix: Identifier? = nil, tabs: [SchemaTab]
    ) {
        self.id = id
        self.title = title
        self.customizationBehavior = customizationBehavior
        self.defaultVisibility = defaultVisibility
        self.hiddenIn = hiddenIn
        self.dynamicIdPrefix = dynamicIdPrefix
        self.tabs = tabs
    }
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

    package init(items: [SchemaItem]) { self.items = items }

    package static let maxItems = 500
    /// Longest title (and image name), in UTF-8 bytes.
    package static let maxTitleBytes = 1024
}
