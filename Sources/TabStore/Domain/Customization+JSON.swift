import TabStoreSupport
extension Customization {
    /// The customization as docs/api.md "Shapes" shows it; maps are written with sorted keys so equal values encode equally.
    package func json(appId: Identifier, userId: Identifier) -> JSONValue {
        var object = JSONObject()
        object["appId"] = .string(appId.text)
        object["userId"] = .string(userId.text)
        object["revision"] = .integer(revision)
        object["schemaVersion"] = .integer(schemaVersion)
        object["updatedAt"] = updatedAt.map { .string($0) } ?? .null
        object["tabs"] = .object(JSONObject(tabs.keys.sorted().map { id in
            let entry = tabs[id]!
            return (id.text, ["sidebarVisibility": .string(entry.sidebarVisibility.rawValue),
                         "tabBarVisibility": .string(entry.tabBarVisibility.rawValue)])
        }))
        object["sections"] = .object(JSONObject(sections.keys.sorted().map { id in
            let entry = sections[id]!
            var section = JSONObject()
            section["tabOrder"] = entry.tabOrder.map { .array($0.map { .string($0.text) }) } ?? .null
            if let expanded = entry.expanded { section["expanded"] = .bool(expanded) }
            return (id.text, .object(section))
        }))
        object["tabBarOrder"] = tabBarOrder.map { .array($0.map { .string($0.text) }) } ?? .null
        // Absent when no list is stored, so documents without data-driven tabs keep their v1 bytes.
        if !dynamicTabs.isEmpty {
            object["dynamicTabs"] = .object(JSONObject(dynamicTabs.keys.sorted().map { id in
                (id.text, .array(dynamicTabs[id]!.tabs.map { $0.json() }))
            }))
        }
        return .object(object)
    }

    /// The server-owned fields a client may echo back in a PUT.
    package struct Echo: Sendable, Equatable {
        package var appId: String?
        package var userId: String?
        package var revision: Int?
        package var schemaVersion: Int?
    }

    /// Which limits a decode applies. A request is held to the request limits; a stored document was accepted
    /// once (possibly by an older version with other limits) and must stay readable, countable and deletable,
    /// so it is decoded with no count or id limits: its size is already bounded by what is stored.
    package enum DecodeRules: Sendable {
        case request
        case stored
    }

    /// Decodes a document the store holds (written by `json(appId:userId:)`), under storage rules.
    /// - Throws: `JSONParser.Failure` or `MalformedDocument` when the stored bytes are damaged.
    package static func decodeStored(_ bytes: [UInt8]) throws -> Customization {
        try decode(try JSONParser.parse(bytes), rules: .stored).0
    }

    /// Decodes a customization document (a PUT body, or a stored document).
    /// - Throws: `MalformedDocument` for wrong shapes, unknown fields, unknown enum values, and (request rules)
    ///   ids that are not 1-256 UTF-8 bytes without control characters or too many entries.
    package static func decode(_ json: JSONValue, rules: DecodeRules = .request) throws(MalformedDocument) -> (Customization, Echo) {
        let checked = rules == .request
        let root = try ObjectReader(json, at: "")
        try root.rejectUnknown(["appId", "userId", "revision", "schemaVersion", "updatedAt", "tabs", "sections", "tabBarOrder", "dynamicTabs"])
        var value = Customization()
        let echo = Echo(
            appId: try root.string("appId"), userId: try root.string("userId"),
            revision: try root.integer("revision"), schemaVersion: try root.integer("schemaVersion"))
        value.revision = echo.revision ?? 0
        value.schemaVersion = echo.schemaVersion ?? 0
        value.updatedAt = try root.string("updatedAt")
        if let tabs = try root.nested("tabs") {
            if checked { try checkCount(tabs.object.members.count, max: maxTabEntries, at: "/tabs") }
            for (key, member) in tabs.object.members {
                let id = Identifier(key)
                if checked { try checkId(id, at: tabs.path(key)) }
                let entry = try ObjectReader(member, at: tabs.path(key))
                try entry.rejectUnknown(["sidebarVisibility", "tabBarVisibility"])
                value.tabs[id] = TabEntry(
                    sidebarVisibility: try entry.strictEnum("sidebarVisibility", Visibility.self) ?? .automatic,
                    tabBarVisibility: try entry.strictEnum("tabBarVisibility", Visibility.self) ?? .automatic)
            }
        }
        if let sections = try root.nested("sections") {
            if checked { try checkCount(sections.object.members.count, max: TabSchema.maxItems, at: "/sections") }
            for (key, member) in sections.object.members {
                let id = Identifier(key)
                if checked { try checkId(id, at: sections.path(key)) }
                let entry = try ObjectReader(member, at: sections.path(key))
                try entry.rejectUnknown(["tabOrder", "expanded"])
                let order = try entry.identifierArray("tabOrder", checked: checked, max: maxOrderLength)
                value.sections[id] = SectionEntry(tabOrder: order, expanded: try entry.bool("expanded"))
            }
        }
        value.tabBarOrder = try root.identifierArray("tabBarOrder", checked: checked, max: maxOrderLength)
        if let lists = try root.nested("dynamicTabs") {
            if checked { try checkCount(lists.object.members.count, max: TabSchema.maxItems, at: "/dynamicTabs") }
            for (key, _) in lists.object.members {
                let id = Identifier(key)
                if checked { try checkId(id, at: lists.path(key)) }
                value.dynamicTabs[id] = DynamicTabList(try DynamicTab.decodeList(lists, key, checked: checked))
            }
        }
        return (value, echo)
    }

    static func checkCount(_ count: Int, max: Int, at pointer: String) throws(MalformedDocument) {
        guard count <= max else { throw MalformedDocument(pointer: pointer, code: .tooManyEntries, detail: "at most \(max) entries") }
    }

    /// A client's id: 1-256 UTF-8 bytes without control characters (docs/api.md "Conventions").
    static func checkId(_ id: Identifier, at pointer: String) throws(MalformedDocument) {
        guard id.isValidId else {
            throw MalformedDocument(pointer: pointer, code: .invalidId,
                                    detail: "an id is 1-\(Identifier.maxBytes) UTF-8 bytes without control characters")
        }
    }
}

extension Customization.DynamicTab {
    /// The tab as stored and served: `id`, `title`, and its image when it has one.
    package func json() -> JSONValue {
        var object = JSONObject([("id", .string(id.text)), ("title", .string(title))])
        if let systemImage { object["systemImage"] = .string(systemImage) }
        if let image { object["image"] = .string(image) }
        return .object(object)
    }

    /// Decodes the list at `reader[key]` (a `setDynamicTabs` operation's `tabs`, a document's per-section list).
    /// With `checked` (request rules): at most `DynamicTabs.maxTabs` tabs, each id a valid client id. The rules
    /// of the schema (prefix, uniqueness, titles and image names) are `CustomizationRules`' to check.
    /// - Throws: `MalformedDocument` for wrong shapes, unknown fields, a missing id or title.
    static func decodeList(_ reader: ObjectReader, _ key: String, checked: Bool) throws(MalformedDocument) -> [Self] {
        guard let items = try reader.array(key) else {
            throw MalformedDocument(pointer: reader.path(key), code: .missingField, detail: "\"\(key)\" is required")
        }
        if checked { try Customization.checkCount(items.count, max: DynamicTabs.maxTabs, at: reader.path(key)) }
        var tabs: [Self] = []
        tabs.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let entry = try ObjectReader(item, at: JSONPointer.append(reader.path(key), index))
            try entry.rejectUnknown(["id", "title", "systemImage", "image"])
            let id = Identifier(try entry.requiredString("id"))
            if checked { try Customization.checkId(id, at: entry.path("id")) }
            tabs.append(Self(id: id, title: try entry.requiredString("title"), systemImage: try entry.string("systemImage"),
                             image: try entry.string("image")))
        }
        return tabs
    }
}
