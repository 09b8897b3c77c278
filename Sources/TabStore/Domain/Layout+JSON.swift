import TabStoreSupport
extension Layout {
    package func json(appId: Identifier, userId: Identifier, customization: Customization) -> JSONValue {
        var object = JSONObject()
        object["appId"] = .string(appId.text)
        object["userId"] = .string(userId.text)
        object["sizeClass"] = .string(sizeClass.rawValue)
        if let platform = request.platform { object["platform"] = .string(platform.rawValue) }
        if let style = request.style { object["style"] = .string(style.rawValue) }
        object["revision"] = .integer(customization.revision)
        object["schemaVersion"] = .integer(customization.schemaVersion)
        object["customizationApplied"] = .bool(customizationApplied)
        object["sidebar"] = .array(sidebar.map { item in
            switch item {
            case .tab(let tab): return Self.tabJSON(tab)
            case .section(let section):
                return .object(JSONObject([
                    ("kind", "section"), ("id", .string(section.section.id.text)), ("title", .string(section.section.title)),
                    ("expanded", .bool(section.expanded)), ("tabs", .array(section.tabs.map(Self.tabJSON))),
                ]))
            }
        })
        object["tabBar"] = .array(tabBar.map(Self.tabJSON))
        object["pinned"] = .array(pinned.map(Self.tabJSON))
        object["more"] = .array(more.map(Self.tabJSON))
        object["hidden"] = .array(hidden.map { .string($0.text) })
        object["selectionFallback"] = .object(JSONObject(selectionFallback.map { ($0.hidden.text, .string($0.select.text)) }))
        return .object(object)
    }

    /// A tab as a layout shows it: what a client needs to draw it. The search tab carries the `titleKey` a
    /// client localizes (its `title` is the English fallback).
    static func tabJSON(_ tab: SchemaTab) -> JSONValue {
        var object = JSONObject([("kind", "tab"), ("id", .string(tab.id.text)), ("title", .string(tab.title))])
        if tab.role == .search { object["titleKey"] = .string(searchTitleKey) }
        if let systemImage = tab.systemImage { object["systemImage"] = .string(systemImage) }
        if let image = tab.image { object["image"] = .string(image) }
        if let role = tab.role { object["role"] = .string(role.rawValue) }
        return .object(object)
    }
}
