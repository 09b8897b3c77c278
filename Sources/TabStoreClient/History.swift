import Foundation

/// One kept revision (openapi.yaml `HistoryItem`).
public struct HistoryItem: Codable, Sendable, Hashable {
    /// What made a revision.
    public enum Change: String, Codable, Sendable, Hashable, CaseIterable {
        case put, patch, delete, revert
        /// A schema version dropped or reset some of the user's choices (`schemaVersion`, `dropped`).
        case schema
        /// A kind this client does not know yet (a newer server): the entry is still listed.
        case unknown

        /// Decodes a kind; one this client does not know is `.unknown`, never a failure of the whole page.
        public init(from decoder: any Decoder) throws {
            self = Change(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .unknown
        }
    }

    /// Who made a revision: the user (through their token) or an operator (the operator token's name).
    public struct Actor: Codable, Sendable, Hashable {
        /// `user` or `operator`.
        public var kind: String
        /// The user's id, or the operator token's name (`bootstrap` for the first token); nil for a `.schema` entry
        /// (who registered the version is in the operators' audit log).
        public var name: String?

        /// A value with these members.
        public init(kind: String, name: String?) {
            self.kind = kind
            self.name = name
        }
    }

    /// The revision's number.
    public var revision: Int
    /// When the server stored it.
    public var updatedAt: Date
    /// What made this revision.
    public var change: Change
    /// A PATCH's operations as sent (nil for other changes, or when the list was too large to keep).
    public var operations: [TabOperation]?
    /// The whole customization at this revision; nil when the server could not read it back.
    public var customization: Customization?
    /// Who made it; nil from a server that does not say.
    public var actor: Actor?
    /// A revert's target revision.
    public var toRevision: Int?
    /// A `.schema` entry's schema version.
    public var schemaVersion: Int?
    /// A `.schema` entry's ids the user's choices named that the version lacks.
    public var dropped: [TabStoreID]?
    /// A `.schema` entry's tabs (and sections' expansion) whose choice fell back to the default.
    public var reset: [TabStoreID]?
    /// A `.schema` entry's sections whose customized order changed.
    public var ordersChanged: [TabStoreID]?
    /// A `.schema` entry's count of data-driven tabs dropped.
    public var dynamicTabsDropped: Int?

    /// A value with these members.
    public init(revision: Int, updatedAt: Date, change: Change, operations: [TabOperation]? = nil, customization: Customization?,
                actor: Actor? = nil, toRevision: Int? = nil, schemaVersion: Int? = nil, dropped: [TabStoreID]? = nil,
                reset: [TabStoreID]? = nil, ordersChanged: [TabStoreID]? = nil, dynamicTabsDropped: Int? = nil) {
        self.revision = revision
        self.updatedAt = updatedAt
        self.change = change
        self.operations = operations
        self.customization = customization
        self.actor = actor
        self.toRevision = toRevision
        self.schemaVersion = schemaVersion
        self.dropped = dropped
        self.reset = reset
        self.ordersChanged = ordersChanged
        self.dynamicTabsDropped = dynamicTabsDropped
    }

    private enum CodingKeys: String, CodingKey {
        case revision, updatedAt, change, operations, customization, actor, toRevision, schemaVersion, dropped, reset, ordersChanged
        case dynamicTabsDropped
    }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        revision = try container.decode(Int.self, forKey: .revision)
        updatedAt = try TabStoreJSON.date(try container.decode(String.self, forKey: .updatedAt), in: container, forKey: .updatedAt)
        change = try container.decode(Change.self, forKey: .change)
        operations = try container.decodeIfPresent([TabOperation].self, forKey: .operations)
        customization = try container.decodeIfPresent(Customization.self, forKey: .customization)
        actor = try container.decodeIfPresent(Actor.self, forKey: .actor)
        toRevision = try container.decodeIfPresent(Int.self, forKey: .toRevision)
        schemaVersion = try container.decodeIfPresent(Int.self, forKey: .schemaVersion)
        dropped = try container.decodeIfPresent([TabStoreID].self, forKey: .dropped)
        reset = try container.decodeIfPresent([TabStoreID].self, forKey: .reset)
        ordersChanged = try container.decodeIfPresent([TabStoreID].self, forKey: .ordersChanged)
        dynamicTabsDropped = try container.decodeIfPresent(Int.self, forKey: .dynamicTabsDropped)
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(revision, forKey: .revision)
        try container.encode(TabStoreJSON.timestamp(updatedAt), forKey: .updatedAt)
        try container.encode(change, forKey: .change)
        try container.encodeIfPresent(operations, forKey: .operations)
        // A `.schema` entry has no customization; a revision's is null only when damaged.
        try container.encodeIfPresent(customization, forKey: .customization)
        try container.encodeIfPresent(actor, forKey: .actor)
        try container.encodeIfPresent(toRevision, forKey: .toRevision)
        try container.encodeIfPresent(schemaVersion, forKey: .schemaVersion)
        try container.encodeIfPresent(dropped, forKey: .dropped)
        try container.encodeIfPresent(reset, forKey: .reset)
        try container.encodeIfPresent(ordersChanged, forKey: .ordersChanged)
        try container.encodeIfPresent(dynamicTabsDropped, forKey: .dynamicTabsDropped)
    }
}

/// One page of the history, newest first (openapi.yaml `HistoryPage`).
public struct HistoryPage: Codable, Sendable, Hashable {
    /// The entries of this page.
    public var items: [HistoryItem]
    /// Pass as `before` for the next (older) page; nil on the last.
    public var nextBefore: Int?

    /// A value with these members.
    public init(items: [HistoryItem], nextBefore: Int?) {
        self.items = items
        self.nextBefore = nextBefore
    }

    private enum CodingKeys: String, CodingKey { case items, nextBefore }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextBefore, forKey: .nextBefore)
    }
}
