extension Customization {
    /// The customization as API.md shows it; maps are written with sorted keys so equal values encode equally.
    public func json(appId: String, userId: String) -> JSONValue {
        var object = JSONObject()
        object["appId"] = .string(appId)
        object["userId"] = .string(userId)
        object["revision"] = .integer(revision)
        object["schemaVersion"] = .integer(schemaVersion)
        object["updatedAt"] = updatedAt.map { .string($0) } ?? .null
        object["tabs"] = .object(JSONObject(tabs.keys.sorted().map { id in
            let entry = tabs[id]!
            return (id, ["sidebarVisibility": .string(entry.sidebarVisibility.rawValue),
                         "tabBarVisibility": .string(entry.tabBarVisibility.rawValue)])
        }))
        object["sections"] = .object(JSONObject(sections.keys.sorted().map { id in
            let entry = sections[id]!
            var section = JSONObject()
            section["tabOrder"] = entry.tabOrder.map { .array($0.map { .string($0) }) } ?? .null
            if let expanded = entry.expanded { section["expanded"] = .bool(expanded) }
            return (id, .object(section))
        }))
        object["tabBarOrder"] = tabBarOrder.map { .array($0.map { .string($0) }) } ?? .null
        return .object(object)
    }

    /// The server-owned fields a client may echo back in a PUT.
    public struct Echo: Sendable, Equatable {
        public var appId: String?
        public var userId: String?
        public var revision: Int?
        public var schemaVersion: Int?
    }

    /// Decodes a document the store holds (written by `json(appId:userId:)`).
    /// - Throws: `JSONParser.Failure` or `MalformedDocument` when the stored bytes are damaged.
    public static func decodeStored(_ bytes: [UInt8]) throws -> Customization {
        try decode(try JSONParser.parse(bytes)).0
    }

    /// Decodes a customization document (a PUT body, or a stored document).
    /// - Throws: `MalformedDocument` for wrong shapes, unknown fields or unknown enum values.
    public static func decode(_ json: JSONValue) throws(MalformedDocument) -> (Customization, Echo) {
        let root = try ObjectReader(json, at: "")
        try root.rejectUnknown(["appId", "userId", "revision", "schemaVersion", "updatedAt", "tabs", "sections", "tabBarOrder"])
        var value = Customization()
        let echo = Echo(
            appId: try root.string("appId"), userId: try root.string("userId"),
            revision: try root.integer("revision"), schemaVersion: try root.integer("schemaVersion"))
        value.revision = echo.revision ?? 0
        value.schemaVersion = echo.schemaVersion ?? 0
        value.updatedAt = try root.string("updatedAt")
        if let tabs = try root.nested("tabs") {
            guard tabs.object.members.count <= maxTabEntries else {
                throw MalformedDocument(pointer: "/tabs", code: "too-many-entries", detail: "at most \(maxTabEntries) tab entries")
            }
            for (id, member) in tabs.object.members {
                let entry = try ObjectReader(member, at: tabs.path(id))
                try entry.rejectUnknown(["sidebarVisibility", "tabBarVisibility"])
                value.tabs[id] = TabEntry(
                    sidebarVisibility: try entry.strictEnum("sidebarVisibility", Visibility.self) ?? .automatic,
                    tabBarVisibility: try entry.strictEnum("tabBarVisibility", Visibility.self) ?? .automatic)
            }
        }
        if let sections = try root.nested("sections") {
            guard sections.object.members.count <= TabSchema.maxItems else {
                throw MalformedDocument(pointer: "/sections", code: "too-many-entries", detail: "at most \(TabSchema.maxItems) section entries")
            }
            for (id, member) in sections.object.members {
                let entry = try ObjectReader(member, at: sections.path(id))
                try entry.rejectUnknown(["tabOrder", "expanded"])
                let order = try entry.stringArray("tabOrder")
                if let order, order.count > maxOrderLength {
                    throw MalformedDocument(pointer: entry.path("tabOrder"), code: "too-many-entries", detail: "at most \(maxOrderLength) ids")
                }
                value.sections[id] = SectionEntry(tabOrder: order, expanded: try entry.bool("expanded"))
            }
        }
        value.tabBarOrder = try root.stringArray("tabBarOrder")
        if let order = value.tabBarOrder, order.count > maxOrderLength {
            throw MalformedDocument(pointer: "/tabBarOrder", code: "too-many-entries", detail: "at most \(maxOrderLength) ids")
        }
        return (value, echo)
    }
}
