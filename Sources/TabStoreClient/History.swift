import Foundation

/// One kept revision (openapi.yaml `HistoryItem`).
public struct HistoryItem: Codable, Sendable, Hashable {
    /// What made a revision.
    public enum Change: String, Codable, Sendable, Hashable, CaseIterable {
        case put, patch, delete, revert
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

    /// A value with these members.
    public init(revision: Int, updatedAt: Date, change: Change, operations: [TabOperation]? = nil, customization: Customization?) {
        self.revision = revision
        self.updatedAt = updatedAt
        self.change = change
        self.operations = operations
        self.customization = customization
    }

    private enum CodingKeys: String, CodingKey { case revision, updatedAt, change, operations, customization }

    /// Decodes it from the JSON the server sends.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        revision = try container.decode(Int.self, forKey: .revision)
        updatedAt = try TabStoreJSON.date(try container.decode(String.self, forKey: .updatedAt), in: container, forKey: .updatedAt)
        change = try container.decode(Change.self, forKey: .change)
        operations = try container.decodeIfPresent([TabOperation].self, forKey: .operations)
        customization = try container.decodeIfPresent(Customization.self, forKey: .customization)
    }

    /// Encodes it as the JSON the server reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(revision, forKey: .revision)
        try container.encode(TabStoreJSON.timestamp(updatedAt), forKey: .updatedAt)
        try container.encode(change, forKey: .change)
        try container.encodeIfPresent(operations, forKey: .operations)
        try container.encode(customization, forKey: .customization)
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
