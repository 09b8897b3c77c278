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
        try root.rejectUnknown(["items", "version", "createdAt", "customizablePlatforms"])
        // Ignored, but type-checked like PUT customization's echo fields: `"version": "abc"` is a typo worth a 400.
        // An integer as JSON Schema (openapi.yaml) means it: `3.0` and integers beyond 64 bits are integers too.
        try root.requireIntegral("version")
        _ = try root.string("createdAt")
        guard let items = try root.array("items") else {
            throw MalformedDocument(pointer: "/items", code: .missingField, detail: "\"items\" is required")
        }
        var decoded: [SchemaItem] = []
        for (index, item) in items.enumerated() {
            decoded.append(try decodeItem(item, at: JSONPointer.append("/items", index), nested: false, problems: &problems))
        }
        deriveIds(&decoded, problems: &problems)
        return TabSchema(items: decoded, customizablePlatforms: try decodeList(root, "customizablePlatforms", Platform.self, problems: &problems))
    }

    /// Gives every tab registered without an id (or with a reserved `~derived.` id, as the service shows it) its
    /// derived id (`DerivedId`): the occurrence counts the id-less tabs of the same place and title in builder order.
    /// A reserved id that is not the tab's own derived id is reported: it would name another tab, or none.
    private static func deriveIds(_ items: inout [SchemaItem], problems: inout [Violation]) {
        struct Key: Hashable {
            let section: Identifier?
            let title: Identifier
        }
        var occurrences: [Key: Int] = [:]
        func derive(_ tab: inout SchemaTab, section: Identifier?, at pointer: String) {
            guard tab.hasDerivedId else { return }
            let key = Key(section: section, title: Identifier(tab.title))
            occurrences[key, default: 0] += 1
            let derived = DerivedId.make(section: section, title: tab.title, occurrence: occurrences[key]!)
            if !tab.id.text.isEmpty, tab.id != derived {
                problems.append(Violation(
                    pointer: pointer + "/id", code: .invalidId,
                    detail: "ids starting with \"\(DerivedId.prefix)\" are derived by the service; this tab's is \"\(derived)\" (or omit the id)"))
            }
            tab.id = derived
        }
        for index in items.indices {
            let pointer = JSONPointer.append("/items", index)
            switch items[index] {
            case .tab(var tab):
                derive(&tab, section: nil, at: pointer)
                items[index] = .tab(tab)
            case .section(var section):
                for tabIndex in section.tabs.indices {
                    derive(&section.tabs[tabIndex], section: section.id, at: pointer + "/tabs/\(tabIndex)")
                }
                items[index] = .section(section)
            }
        }
    }

    private static func decodeItem(
        _ json: JSONValue, at pointer: String, nested: Bool, problems: inout [Violation]
    ) throws(MalformedDocument) -> SchemaItem {
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
        case "forEach":
            if nested {
                problems.append(Violation(
                    pointer: pointer, code: .nestedSection,
                    detail: "a section may hold only tabs; a ForEach inside a section is the section's dynamicTabs"))
            }
            return .section(try decodeForEach(reader, problems: &problems))
        default:
            throw MalformedDocument(
                pointer: reader.path("kind"), code: .invalidValue, detail: "\"kind\" must be \"tab\", \"section\" or \"forEach\"")
        }
    }

    private static func decodeBehavior(
        _ reader: ObjectReader, problems: inout [Violation]
    ) throws(MalformedDocument) -> PerPlacement<CustomizationBehavior> {
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

    /// A list of enum values (`hiddenIn`, `customizablePlatforms`): repeats count once, unknown values are problems.
    private static func decodeList<E: RawRepresentable & CaseIterable & Equatable>(
        _ reader: ObjectReader, _ key: String, _ type: E.Type, problems: inout [Violation]
    ) throws(MalformedDocument) -> [E] where E.RawValue == String {
        guard let values = try reader.stringArray(key) else { return [] }
        var decoded: [E] = []
        for (index, raw) in values.enumerated() {
            if let value = E(rawValue: raw) {
                if !decoded.contains(value) { decoded.append(value) }
            } else {
                let allowed = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                problems.append(Violation(
                    pointer: JSONPointer.append(reader.path(key), index), code: .invalidValue,
                    detail: "\(ClientText.quoted(raw)) is not one of \(allowed)"))
            }
        }
        return decoded
    }

    /// An optional id member (`standIn`), kept as given: the schema rules check it.
    private static func optionalId(_ reader: ObjectReader, _ key: String) throws(MalformedDocument) -> Identifier? {
        try reader.string(key).map { Identifier($0) }
    }

    private static func decodeTab(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> SchemaTab {
        try reader.rejectUnknown(["kind", "id", "title", "systemImage", "image", "role", "placement",
                                  "customizationBehavior", "defaultVisibility", "hiddenIn", "standIn"])
        let role = try reader.enumValue("role", TabRole.self, problems: &problems)
        // A search tab's label is the system's ("Search"); its title may be omitted (docs/domain.md "Tab schema").
        let title = try reader.string("title") ?? (role == .search ? "Search" : "")
        // No id (docs/domain.md "Tabs without an id": a tab disabled in both placements needs none), or a derived id read back: derived.
        let id = try reader.string("id").map { Identifier($0) }
        return SchemaTab(
            id: id ?? "", hasDerivedId: id.map(DerivedId.isReserved) ?? true,
            title: title,
            systemImage: try reader.string("systemImage") ?? (role == .search && reader.value("image") == nil ? "magnifyingglass" : nil),
            image: try reader.string("image"),
            role: role,
            placement: try reader.enumValue("placement", TabPlacement.self, problems: &problems) ?? (role == .search ? .pinned : .automatic),
            customizationBehavior: try decodeBehavior(reader, problems: &problems),
            defaultVisibility: try decodeVisibility(reader, problems: &problems),
            hiddenIn: try decodeList(reader, "hiddenIn", SizeClass.self, problems: &problems),
            standIn: try optionalId(reader, "standIn"))
    }

    private static func decodeSection(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> SchemaSection {
        try reader.rejectUnknown(["kind", "id", "title", "customizationBehavior", "defaultVisibility", "hiddenIn", "standIn", "expanded",
                                  "dynamicTabs", "tabs"])
        let dynamicTabs = try decodeDynamicTabs(reader, problems: &problems)
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
            hiddenIn: try decodeList(reader, "hiddenIn", SizeClass.self, problems: &problems),
            standIn: try optionalId(reader, "standIn"),
            expanded: try reader.bool("expanded") ?? true,
            dynamicTabs: dynamicTabs,
            tabs: tabs)
    }

    private static func decodeDynamicTabs(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> DynamicTabs? {
        guard let dynamic = try reader.nested("dynamicTabs") else { return nil }
        try dynamic.rejectUnknown(["idPrefix", "customizationBehavior"])
        return DynamicTabs(idPrefix: Identifier(try dynamic.requiredString("idPrefix")),
                           customizationBehavior: try decodeBehavior(dynamic, problems: &problems))
    }

    /// A `ForEach` directly in the `TabView` (docs/domain.md "A top-level ForEach"): an id operations name it by, its `dynamicTabs` (required:
    /// they are all it has), and what a modifier on its tabs or the app's own hiding may say about them. No title,
    /// tabs or expansion (400 `unknown-field`): it has no header and no tabs of its own.
    private static func decodeForEach(_ reader: ObjectReader, problems: inout [Violation]) throws(MalformedDocument) -> SchemaSection {
        try reader.rejectUnknown(["kind", "id", "dynamicTabs", "defaultVisibility", "hiddenIn", "standIn"])
        guard let dynamicTabs = try decodeDynamicTabs(reader, problems: &problems) else {
            throw MalformedDocument(pointer: reader.path("dynamicTabs"), code: .missingField, detail: "a forEach needs \"dynamicTabs\"")
        }
        return SchemaSection.forEach(
            id: Identifier(try reader.string("id") ?? ""),
            dynamicTabs: dynamicTabs,
            defaultVisibility: try decodeVisibility(reader, problems: &problems),
            hiddenIn: try decodeList(reader, "hiddenIn", SizeClass.self, problems: &problems),
            standIn: try optionalId(reader, "standIn"))
    }

    /// The schema as served: defaults written out, so a client never guesses them.
    package func json() -> JSONValue {
        .object(JSONObject([
            ("items", .array(items.map { item in
                switch item {
                case .tab(let tab): tab.json()
                case .section(let section): section.json()
                }
            })),
            ("customizablePlatforms", .array(customizablePlatforms.map { .string($0.rawValue) })),
        ]))
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
        if let standIn { object["standIn"] = .string(standIn.text) }
        return .object(object)
    }
}

extension SchemaSection {
    /// The full schema form: a section's, or a forEach's (no title, behavior, expansion or tabs of its own).
    package func json() -> JSONValue {
        var object = JSONObject([("kind", .string(kind.rawValue)), ("id", .string(id.text))])
        if !isForEach {
            object["title"] = .string(title)
            object["customizationBehavior"] = customizationBehavior.json()
        }
        object["defaultVisibility"] = defaultVisibility.json()
        if !hiddenIn.isEmpty { object["hiddenIn"] = .array(hiddenIn.map { .string($0.rawValue) }) }
        if let standIn { object["standIn"] = .string(standIn.text) }
        if !isForEach { object["expanded"] = .bool(expanded) }
        if let dynamicTabs {
            object["dynamicTabs"] = .object(JSONObject([
                ("idPrefix", .string(dynamicTabs.idPrefix.text)), ("customizationBehavior", dynamicTabs.customizationBehavior.json()),
            ]))
        }
        if !isForEach { object["tabs"] = .array(tabs.map { $0.json() }) }
        return .object(object)
    }
}
