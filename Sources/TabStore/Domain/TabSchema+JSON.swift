import TabStoreSupport
extension TabSchema {
    /// Decodes a schema document and checks every schema rule, collecting all problems at once.
    /// - Throws: `MalformedDocument` for wrong shapes (400), `RuleRefusal` for rule violations (422).
    package static func parse(_ json: JSONValue) throws -> TabSchema {
        var problems: [Violation] = []
        let schema = try decode(json, problems: &problems)
        problems += schema.validate()
        if !problems.isEmpty { throw RuleRefusal(problems) }
        return schema
    }

    /// Decodes the shape only; unknown enum values are added to `problems` instead of thrown.
    package static func decode(_ json: JSONValue, problems: inout [Violation]) throws(MalformedDocument) -> TabSchema {
        let root = try ObjectReader(json, at: "")
        // `version` and `createdAt` are what GET answers with; accepting them lets a client PUT back what it read.
        try root.rejectUnknown(["items", "version", "createdAt"])
        // Ignored, but type-checked like PUT customization's echo fields: `"version": "abc"` is a typo worth a 400.
        _ = try root.integer("version")
        _ = try root.string("createdAt")
        guard let items = try root.array("items") else {
            throw MalformedDocument(pointer: "/items", code: .missingField, detail: "\"items\" is required")
        }
        var decoded: [SchemaItem] = []
        for (index, item) in items.enumerated() {
            decoded.append(try decodeItem(item, at: JSONPointer.append("/items", index), nested: false, problems: &problems))
        }
        return TabSchema(items: decoded)
    }

    private static func decodeItem(_ json: JSONValue, at pointer: String, nested: Bool, problems: inout [Violation]) throws(MalformedDocument) -> SchemaItem {
        let reader = try ObjectReader(json, at: pointer)
        let kind = try reader.string("kind") ?? "tab"
        switch kind {
        case "tab":
            return .tab(try decodeTab(reader, problems: &problems))
        case "section":
            if nested {
                problems.append(Violation(pointer: pointer, code: .nestedSection, detail: "a section may hold only tabs, not other sections"))
            }
            return .section(try decodeSection(reader, problems: &problems))
        default:
            throw MalformedDocument(pointer: reader.path("kind"), code: .invalidValue, detail: "\"kind\" must be \"tab\" or \"section\"")
        }
    }

    private static func decodeBehavior(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> PerPlacement<CustomizationBehavior> {
        guard let nested = try reader.nested("customizationBehavior") else { return .init(sidebar: .automatic, tabBar: .automatic) }
        try nested.rejectUnknown(["sidebar", "tabBar"])
        return .init(
            sidebar: try nested.enumValue("sidebar", CustomizationBehavior.self, problems: &problems) ?? .automatic,
            tabBar: try nested.enumValue("tabBar", CustomizationBehavior.self, problems: &problems) ?? .automatic)
    }

    private static func decodeVisibility(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> PerPlacement<Visibility> {
        guard let nested = try reader.nested("defaultVisibility") else { return .init(sidebar: .automatic, tabBar: .automatic) }
        try nested.rejectUnknown(["sidebar", "tabBar"])
        return .init(
            sidebar: try nested.enumValue("sidebar", Visibility.self, problems: &problems) ?? .automatic,
            tabBar: try nested.enumValue("tabBar", Visibility.self, problems: &problems) ?? .automatic)
    }

    private static func decodeHiddenIn(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> [SizeClass] {
        guard let values = try reader.stringArray("hiddenIn") else { return [] }
        var classes: [SizeClass] = []
        for (index, raw) in values.enumerated() {
            if let sizeClass = SizeClass(rawValue: raw) {
                if !classes.contains(sizeClass) { classes.append(sizeClass) }
            } else {
                problems.append(Violation(
                    pointer: JSONPointer.append(reader.path("hiddenIn"), index), code: .invalidValue,
                    detail: "\(ClientText.quoted(raw)) is not one of \"compact\", \"regular\""))
            }
        }
        return classes
    }

    private static func decodeTab(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> SchemaTab {
        try reader.rejectUnknown(["kind", "id", "title", "systemImage", "image", "role", "placement",
                                  "customizationBehavior", "defaultVisibility", "hiddenIn"])
        let role = try reader.enumValue("role", TabRole.self, problems: &problems)
        // A search tab's label is the system's ("Search"); its title may be omitted (seed 002).
        let title = try reader.string("title") ?? (role == .search ? "Search" : "")
        return SchemaTab(
            id: Identifier(try reader.string("id") ?? ""),
            title: title,
            systemImage: try reader.string("systemImage") ?? (role == .search && reader.value("image") == nil ? "magnifyingglass" : nil),
            image: try reader.string("image"),
            role: role,
            placement: try reader.enumValue("placement", TabPlacement.self, problems: &problems) ?? (role == .search ? .pinned : .automatic),
            customizationBehavior: try decodeBehavior(reader, problems: &problems),
            defaultVisibility: try decodeVisibility(reader, problems: &problems),
            hiddenIn: try decodeHiddenIn(reader, problems: &problems))
    }

    private static func decodeSection(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> SchemaSection {
        try reader.rejectUnknown(["kind", "id", "title", "customizationBehavior", "defaultVisibility", "hiddenIn", "dynamicTabs", "tabs"])
        var prefix: Identifier?
        if let dynamic = try reader.nested("dynamicTabs") {
            try dynamic.rejectUnknown(["idPrefix"])
            prefix = Identifier(try dynamic.requiredString("idPrefix"))
        }
        var tabs: [SchemaTab] = []
        for (index, item) in (try reader.array("tabs") ?? []).enumerated() {
            let pointer = JSONPointer.append(reader.path("tabs"), index)
            switch try decodeItem(item, at: pointer, nested: true, problems: &problems) {
            case .tab(let tab): tabs.append(tab)
            case .section: break  // reported as nested-section
            }
        }
        return SchemaSection(
            id: Identifier(try reader.string("id") ?? ""),
            title: try reader.string("title") ?? "",
            customizationBehavior: try decodeBehavior(reader, problems: &problems),
            defaultVisibility: try decodeVisibility(reader, problems: &problems),
            hiddenIn: try decodeHiddenIn(reader, problems: &problems),
            dynamicIdPrefix: prefix,
            tabs: tabs)
    }

    /// The schema as served: defaults written out, so a client never guesses them.
    package func json() -> JSONValue {
        .object(JSONObject([("items", .array(items.map { item in
            switch item {
            case .tab(let tab): tab.json()
            case .section(let section): section.json()
            }
        }))]))
    }
}

extension PerPlacement where Value: RawRepresentable, Value.RawValue == String {
    func json() -> JSONValue { ["sidebar": .string(sidebar.rawValue), "tabBar": .string(tabBar.rawValue)] }
}

extension SchemaTab {
    /// The full schema form of the tab.
    package func json() -> JSONValue {
        var object = JSONObject([("kind", "tab"), ("id", .string(id.text)), ("title", .string(title))])
        if let systemImage { object["systemImage"] = .string(systemImage) }
        if let image { object["image"] = .string(image) }
        if let role { object["role"] = .string(role.rawValue) }
        object["placement"] = .string(placement.rawValue)
        object["customizationBehavior"] = customizationBehavior.json()
        object["defaultVisibility"] = defaultVisibility.json()
        if !hiddenIn.isEmpty { object["hiddenIn"] = .array(hiddenIn.map { .string($0.rawValue) }) }
        return .object(object)
    }
}

extension SchemaSection {
    package func json() -> JSONValue {
        var object = JSONObject([("kind", "section"), ("id", .string(id.text)), ("title", .string(title))])
        object["customizationBehavior"] = customizationBehavior.json()
        object["defaultVisibility"] = defaultVisibility.json()
        if !hiddenIn.isEmpty { object["hiddenIn"] = .array(hiddenIn.map { .string($0.rawValue) }) }
        if let dynamicIdPrefix { object["dynamicTabs"] = ["idPrefix": .string(dynamicIdPrefix.text)] }
        object["tabs"] = .array(tabs.map { $0.json() })
        return .object(object)
    }
}
