import TabStoreSupport
/// SwiftUI's `AdaptableTabBarPlacement`: where a customization applies.
public enum Placement: String, Sendable, CaseIterable {
    case sidebar, tabBar
}

/// SwiftUI's `TabCustomizationBehavior`.
public enum CustomizationBehavior: String, Sendable, CaseIterable, Comparable {
    case automatic, reorderable, disabled

    /// Hiding (or adding) needs full customization.
    public var canHide: Bool { self == .automatic }
    /// Moving needs `automatic` or `reorderable`.
    public var canMove: Bool { self != .disabled }

    private var strictness: Int {
        switch self {
        case .automatic: 0
        case .reorderable: 1
        case .disabled: 2
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.strictness < rhs.strictness }
}

/// SwiftUI's `Visibility`: `automatic` means "not customized, use the default".
public enum Visibility: String, Sendable, CaseIterable {
    case automatic, visible, hidden
}

/// Where a tab may appear.
public enum TabPlacement: String, Sendable, CaseIterable {
    case automatic, pinned, sidebarOnly
}

public enum TabRole: String, Sendable, CaseIterable {
    case search
}

/// The horizontal size class a layout is resolved for.
public enum SizeClass: String, Sendable, CaseIterable {
    case compact, regular
}

/// A value for each placement.
public struct PerPlacement<Value: Sendable & Equatable>: Sendable, Equatable {
    public var sidebar: Value
    public var tabBar: Value

    public init(sidebar: Value, tabBar: Value) {
        self.sidebar = sidebar
        self.tabBar = tabBar
    }

    public subscript(placement: Placement) -> Value {
        get { placement == .sidebar ? sidebar : tabBar }
        set { if placement == .sidebar { sidebar = newValue } else { tabBar = newValue } }
    }
}

/// One `Tab` of the app's `TabView` builder.
public struct SchemaTab: Sendable, Equatable {
    public var id: Identifier
    public var title: String
    public var systemImage: String?
    public var image: String?
    public var role: TabRole?
    public var placement: TabPlacement
    public var customizationBehavior: PerPlacement<CustomizationBehavior>
    public var defaultVisibility: PerPlacement<Visibility>
    public var hiddenIn: [SizeClass]

    public init(
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
    public var isPinned: Bool { placement == .pinned || role == .search }
}

/// One `TabSection`: tabs only, never nested sections.
public struct SchemaSection: Sendable, Equatable {
    public var id: Identifier
    public var title: String
    public var customizationBehavior: PerPlacement<CustomizationBehavior>
    public var defaultVisibility: PerPlacement<Visibility>
    public var hiddenIn: [SizeClass]
    /// Tabs that come from data (`ForEach`): their ids start with this prefix.
    public var dynamicIdPrefix: Identifier?
    public var tabs: [SchemaTab]

    public init(
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
public enum SchemaItem: Sendable, Equatable {
    case tab(SchemaTab)
    case section(SchemaSection)

    public var id: Identifier {
        switch self {
        case .tab(let tab): tab.id
        case .section(let section): section.id
        }
    }
}

/// The ordered items of an app's `TabView` builder, as the app registered them.
public struct TabSchema: Sendable, Equatable {
    public var items: [SchemaItem]

    public init(items: [SchemaItem]) { self.items = items }

    public static let maxItems = 500
    /// Longest title (and image name), in UTF-8 bytes.
    public static let maxTitleBytes = 1024
}
