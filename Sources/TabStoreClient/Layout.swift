import Foundation

/// `compact` (iPhone, narrow iPad: a tab bar with More) or `regular` (iPad sidebar, Mac).
public enum SizeClass: String, Codable, Sendable, Hashable, CaseIterable {
    case compact, regular
}

/// The client's platform; the server applies a person's choices only where Apple does (or the schema opts in).
public enum Platform: String, Codable, Sendable, Hashable, CaseIterable {
    case iOS, iPadOS, macOS, visionOS, tvOS
}

/// The client's `TabViewStyle`.
public enum LayoutStyle: String, Codable, Sendable, Hashable, CaseIterable {
    case sidebarAdaptable, tabBarOnly
}

/// A tab's role; the search tab's label is the system's.
public enum LayoutTabRole: String, Codable, Sendable, Hashable, CaseIterable {
    case search
}

/// A tab as the layout draws it (openapi.yaml `LayoutTab`, `kind: tab`).
public struct LayoutTab: Codable, Sendable, Hashable, Identifiable {
    /// The id.
    public var id: TabStoreID
    /// The title to show.
    public var title: String
    /// The key to localize instead of `title` (the search tab: `Search`).
    public var titleKey: String?
    /// An SF Symbol name, if any.
    public var systemImage: String?
    /// An image asset name, if any.
    public var image: String?
    /// The tab's role, if any.
    public var role: LayoutTabRole?

    /// A value with these members.
    public init(id: TabStoreID, title: String, titleKey: String? = nil, systemImage: String? = nil, image: String? = nil, role: LayoutTabRole? = nil)
    {
        self.id = id
        self.title = title
        self.titleKey = titleKey
        self.systemImage = systemImage
        self.image = image
        self.role = role
    }

    private enum CodingKeys: String, CodingKey { case kind, id, title, titleKey, systemImage, image, role }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(TabStoreID.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        titleKey = try container.decodeIfPresent(String.self, forKey: .titleKey)
        systemImage = try container.decodeIfPresent(String.self, forKey: .systemImage)
        image = try container.decodeIfPresent(String.self, forKey: .image)
        role = try container.decodeIfPresent(LayoutTabRole.self, forKey: .role)
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("tab", forKey: .kind)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(titleKey, forKey: .titleKey)
        try container.encodeIfPresent(systemImage, forKey: .systemImage)
        try container.encodeIfPresent(image, forKey: .image)
        try container.encodeIfPresent(role, forKey: .role)
    }
}

/// A sidebar section with its visible tabs in effective order (openapi.yaml `LayoutSection`, `kind: section`).
public struct LayoutSection: Codable, Sendable, Hashable, Identifiable {
    /// The id.
    public var id: TabStoreID
    /// The title to show.
    public var title: String
    /// Whether the section is expanded in the sidebar.
    public var expanded: Bool
    /// The section's visible tabs, in effective order.
    public var tabs: [LayoutTab]

    /// A value with these members.
    public init(id: TabStoreID, title: String, expanded: Bool = true, tabs: [LayoutTab]) {
        self.id = id
        self.title = title
        self.expanded = expanded
        self.tabs = tabs
    }

    private enum CodingKeys: String, CodingKey { case kind, id, title, expanded, tabs }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(TabStoreID.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        expanded = try container.decode(Bool.self, forKey: .expanded)
        tabs = try container.decode([LayoutTab].self, forKey: .tabs)
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("section", forKey: .kind)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(expanded, forKey: .expanded)
        try container.encode(tabs, forKey: .tabs)
    }
}

/// A sidebar entry: a top-level tab or a section.
public enum SidebarItem: Codable, Sendable, Hashable, Identifiable {
    case tab(LayoutTab)
    case section(LayoutSection)

    /// The id.
    public var id: TabStoreID {
        switch self {
        case .tab(let tab): tab.id
        case .section(let section): section.id
        }
    }

    private enum CodingKeys: String, CodingKey { case kind }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let kind = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .kind)
        switch kind {
        case "tab": self = .tab(try LayoutTab(from: decoder))
        case "section": self = .section(try LayoutSection(from: decoder))
        default:
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown sidebar item kind \(kind)"))
        }
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .tab(let tab): try tab.encode(to: encoder)
        case .section(let section): try section.encode(to: encoder)
        }
    }
}

/// What a `TabView` shows for one person, size class, platform and style (openapi.yaml `Layout`).
public struct TabLayout: Codable, Sendable, Hashable {
    /// The app's id.
    public var appId: TabStoreID
    /// The person's id.
    public var userId: TabStoreID
    /// The size class it was laid out for.
    public var sizeClass: SizeClass
    /// The platform it was laid out for, if named.
    public var platform: Platform?
    /// The `TabViewStyle` it was laid out for, if named.
    public var style: LayoutStyle?
    /// The customization revision it was laid out from.
    public var revision: Int
    /// The tab schema version it is under.
    public var schemaVersion: Int
    /// Whether the person's choices shaped this layout (else the schema's defaults did).
    public var customizationApplied: Bool
    /// Top-level tabs, then sections; empty where there is no sidebar.
    public var sidebar: [SidebarItem]
    /// The tab bar's tabs, in order.
    public var tabBar: [LayoutTab]
    /// Apart at the trailing end of the bar (the search tab), or in the toolbar beside a sidebar.
    public var pinned: [LayoutTab]
    /// Compact only: draw a More item after `tabBar` when this is not empty.
    public var more: [LayoutTab]
    /// Tabs this layout leaves out, in builder order.
    public var hidden: [TabStoreID]
    /// For every tab not shown: the tab to select instead.
    public var selectionFallback: [TabStoreID: TabStoreID]

    /// A value with these members.
    public init(appId: TabStoreID, userId: TabStoreID, sizeClass: SizeClass, platform: Platform? = nil, style: LayoutStyle? = nil, revision: Int,
                schemaVersion: Int, customizationApplied: Bool, sidebar: [SidebarItem], tabBar: [LayoutTab], pinned: [LayoutTab],
                more: [LayoutTab], hidden: [TabStoreID], selectionFallback: [TabStoreID: TabStoreID]) {
        self.appId = appId
        self.userId = userId
        self.sizeClass = sizeClass
        self.platform = platform
        self.style = style
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.customizationApplied = customizationApplied
        self.sidebar = sidebar
        self.tabBar = tabBar
        self.pinned = pinned
        self.more = more
        self.hidden = hidden
        self.selectionFallback = selectionFallback
    }

    /// The tab to select when `selection` is not shown by this layout (nil when it is shown or unknown).
    public func fallback(for selection: TabStoreID) -> TabStoreID? { selectionFallback[selection] }

    private enum CodingKeys: String, CodingKey {
        case appId, userId, sizeClass, platform, style, revision, schemaVersion, customizationApplied, sidebar, tabBar, pinned, more, hidden,
             selectionFallback
    }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appId = try container.decode(TabStoreID.self, forKey: .appId)
        userId = try container.decode(TabStoreID.self, forKey: .userId)
        sizeClass = try container.decode(SizeClass.self, forKey: .sizeClass)
        platform = try container.decodeIfPresent(Platform.self, forKey: .platform)
        style = try container.decodeIfPresent(LayoutStyle.self, forKey: .style)
        revision = try container.decode(Int.self, forKey: .revision)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        customizationApplied = try container.decode(Bool.self, forKey: .customizationApplied)
        sidebar = try container.decode([SidebarItem].self, forKey: .sidebar)
        tabBar = try container.decode([LayoutTab].self, forKey: .tabBar)
        pinned = try container.decode([LayoutTab].self, forKey: .pinned)
        more = try container.decode([LayoutTab].self, forKey: .more)
        hidden = try container.decode([TabStoreID].self, forKey: .hidden)
        selectionFallback = try container.decodeIDMap(TabStoreID.self, forKey: .selectionFallback)
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appId, forKey: .appId)
        try container.encode(userId, forKey: .userId)
        try container.encode(sizeClass, forKey: .sizeClass)
        try container.encodeIfPresent(platform, forKey: .platform)
        try container.encodeIfPresent(style, forKey: .style)
        try container.encode(revision, forKey: .revision)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(customizationApplied, forKey: .customizationApplied)
        try container.encode(sidebar, forKey: .sidebar)
        try container.encode(tabBar, forKey: .tabBar)
        try container.encode(pinned, forKey: .pinned)
        try container.encode(more, forKey: .more)
        try container.encode(hidden, forKey: .hidden)
        try container.encode(IDMap(selectionFallback), forKey: .selectionFallback)
    }
}
