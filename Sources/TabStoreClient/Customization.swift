import Foundation

/// A tab's visibility in one placement; `automatic` means not customized (the schema's default applies).
public enum TabVisibility: String, Codable, Sendable, Hashable, CaseIterable {
    case automatic, visible, hidden
}

/// What a person chose for one tab (openapi.yaml `TabChoice`).
public struct TabChoice: Codable, Sendable, Hashable {
    /// The visibility in the sidebar.
    public var sidebarVisibility: TabVisibility
    /// The visibility in the tab bar.
    public var tabBarVisibility: TabVisibility

    /// A value with these members.
    public init(sidebarVisibility: TabVisibility = .automatic, tabBarVisibility: TabVisibility = .automatic) {
        self.sidebarVisibility = sidebarVisibility
        self.tabBarVisibility = tabBarVisibility
    }
}

/// What a person chose for one section (openapi.yaml `SectionChoice`): the order of all its tabs (nil: builder
/// order) and whether it is expanded in the sidebar (nil: the schema's default).
public struct SectionChoice: Codable, Sendable, Hashable {
    /// The order of all the section's tabs; nil: the builder order.
    public var tabOrder: [TabStoreID]?
    /// Whether the section is expanded in the sidebar.
    public var expanded: Bool?

    /// A value with these members.
    public init(tabOrder: [TabStoreID]? = nil, expanded: Bool? = nil) {
        self.tabOrder = tabOrder
        self.expanded = expanded
    }

    private enum CodingKeys: String, CodingKey { case tabOrder, expanded }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tabOrder, forKey: .tabOrder)  // required (null when unset)
        try container.encodeIfPresent(expanded, forKey: .expanded)
    }
}

/// One of a person's data-driven tabs (a playlist, a collection): openapi.yaml `DynamicTab`.
public struct DynamicTab: Codable, Sendable, Hashable, Identifiable {
    /// The id.
    public var id: TabStoreID
    /// The title to show.
    public var title: String
    /// An SF Symbol name, if any.
    public var systemImage: String?
    /// An image asset name, if any.
    public var image: String?

    /// A value with these members.
    public init(id: TabStoreID, title: String, systemImage: String? = nil, image: String? = nil) {
        self.id = id
        self.title = title
        self.systemImage = systemImage
        self.image = image
    }
}

/// A person's tab customization as the server stores it (openapi.yaml `Customization`). `appId`, `userId`,
/// `revision`, `schemaVersion` and `updatedAt` are the server's: `replace(_:)` never sends them. Its maps are
/// keyed by id, byte for byte (`TabStoreID`): two ids that differ only in Unicode normalization are two entries.
public struct Customization: Codable, Sendable, Hashable {
    /// The app's id.
    public var appId: TabStoreID
    /// The person's id.
    public var userId: TabStoreID
    /// 0 for a person who never stored one.
    public var revision: Int
    /// The tab schema version it is under.
    public var schemaVersion: Int
    /// When the server stored this revision (sent as RFC 3339 UTC, `2026-11-29T22:00:00Z`); nil for revision 0.
    public var updatedAt: Date?
    /// Per tab id: the person's choice.
    public var tabs: [TabStoreID: TabChoice]
    /// Per section id: the person's choice.
    public var sections: [TabStoreID: SectionChoice]
    /// The person's tab-bar order; nil: the builder order.
    public var tabBarOrder: [TabStoreID]?
    /// Per dynamic section (or top-level forEach): the person's data-driven tabs; nil while none is stored.
    public var dynamicTabs: [TabStoreID: [DynamicTab]]?

    /// A value with these members.
    public init(appId: TabStoreID, userId: TabStoreID, revision: Int = 0, schemaVersion: Int = 1, updatedAt: Date? = nil,
                tabs: [TabStoreID: TabChoice] = [:], sections: [TabStoreID: SectionChoice] = [:], tabBarOrder: [TabStoreID]? = nil,
                dynamicTabs: [TabStoreID: [DynamicTab]]? = nil) {
        self.appId = appId
        self.userId = userId
        self.revision = revision
        self.schemaVersion = schemaVersion
        self.updatedAt = updatedAt
        self.tabs = tabs
        self.sections = sections
        self.tabBarOrder = tabBarOrder
        self.dynamicTabs = dynamicTabs
    }

    /// The entity tag the server gives this representation: `"<revision>.<schemaVersion>"` (openapi.yaml
    /// `components/headers/ETag`). What `If-Match` sends when a write names this customization.
    public var etag: String { "\"\(revision).\(schemaVersion)\"" }

    /// The choice for a tab (`automatic` in both placements when the person made none).
    public subscript(tab id: TabStoreID) -> TabChoice { tabs[id] ?? TabChoice() }

    private enum CodingKeys: String, CodingKey {
        case appId, userId, revision, schemaVersion, updatedAt, tabs, sections, tabBarOrder, dynamicTabs
    }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appId = try container.decode(TabStoreID.self, forKey: .appId)
        userId = try container.decode(TabStoreID.self, forKey: .userId)
        revision = try container.decode(Int.self, forKey: .revision)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        updatedAt = try container.decodeIfPresent(String.self, forKey: .updatedAt).map {
            try TabStoreJSON.date($0, in: container, forKey: .updatedAt)
        }
        tabs = try container.decodeIDMap(TabChoice.self, forKey: .tabs)
        sections = try container.decodeIDMap(SectionChoice.self, forKey: .sections)
        tabBarOrder = try container.decodeIfPresent([TabStoreID].self, forKey: .tabBarOrder)
        dynamicTabs = try container.decodeIDMapIfPresent([DynamicTab].self, forKey: .dynamicTabs)
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appId, forKey: .appId)
        try container.encode(userId, forKey: .userId)
        try container.encode(revision, forKey: .revision)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(updatedAt.map(TabStoreJSON.timestamp), forKey: .updatedAt)
        try container.encode(IDMap(tabs), forKey: .tabs)
        try container.encode(IDMap(sections), forKey: .sections)
        try container.encode(tabBarOrder, forKey: .tabBarOrder)
        try container.encodeIfPresent(dynamicTabs.map(IDMap.init), forKey: .dynamicTabs)
    }

    /// The body of a `PUT`: the choices only (openapi.yaml `CustomizationInput` without the server-owned members).
    struct Choices: Encodable {
        let tabs: [TabStoreID: TabChoice]
        let sections: [TabStoreID: SectionChoice]
        let tabBarOrder: [TabStoreID]?
        let dynamicTabs: [TabStoreID: [DynamicTab]]?

        init(_ customization: Customization) {
            tabs = customization.tabs
            sections = customization.sections
            tabBarOrder = customization.tabBarOrder
            dynamicTabs = customization.dynamicTabs
        }

        private enum CodingKeys: String, CodingKey { case tabs, sections, tabBarOrder, dynamicTabs }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(IDMap(tabs), forKey: .tabs)
            try container.encode(IDMap(sections), forKey: .sections)
            try container.encode(tabBarOrder, forKey: .tabBarOrder)
            try container.encodeIfPresent(dynamicTabs.map(IDMap.init), forKey: .dynamicTabs)
        }
    }
}
