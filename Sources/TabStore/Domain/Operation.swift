import TabStoreSupport
/// One of the `PATCH` operations (docs/api.md "Operations (PATCH)").
package enum Operation: Sendable, Equatable {
    package enum ResetScope: String, Sendable, CaseIterable {
        case sidebar, tabBar, all
    }

    case setVisibility(Placement, tab: Identifier, Visibility)
    case setTabOrder(section: Identifier, tabOrder: [Identifier])
    case moveTab(section: Identifier, tab: Identifier, toIndex: Int)
    case setTabBarOrder([Identifier])
    case setSectionExpanded(section: Identifier, expanded: Bool)
    case setDynamicTabs(section: Identifier, tabs: [Customization.DynamicTab])
    case resetVisibility(ResetScope)
    case resetSectionOrder(section: Identifier?)
    case resetTabBarOrder

    package static let maxOperations = 1_000

    /// Decodes a `PATCH` body: `{"operations": [...]}`.
    /// - Throws: `MalformedDocument` for wrong shapes, unknown ops or fields.
    package static func decodeList(_ json: JSONValue) throws(MalformedDocument) -> [Operation] {
        let root = try ObjectReader(json, at: "")
        try root.rejectUnknown(["operations"])
        guard let items = try root.array("operations") else {
            throw MalformedDocument(pointer: "/operations", code: .missingField, detail: "\"operations\" is required")
        }
        guard items.count <= maxOperations else {
            throw MalformedDocument(pointer: "/operations", code: .tooManyEntries, detail: "at most \(maxOperations) operations")
        }
        var operations: [Operation] = []
        for (index, item) in items.enumerated() {
            operations.append(try decode(item, at: JSONPointer.append("/operations", index)))
        }
        return operations
    }

    static func decode(_ json: JSONValue, at pointer: String) throws(MalformedDocument) -> Operation {
        let reader = try ObjectReader(json, at: pointer)
        let op = try reader.requiredString("op")
        switch op {
        case "setSidebarVisibility", "setTabBarVisibility":
            try reader.rejectUnknown(["op", "tab", "visibility"])
            guard let visibility = try reader.strictEnum("visibility", Visibility.self) else {
                throw MalformedDocument(pointer: reader.path("visibility"), code: .missingField, detail: "\"visibility\" is required")
            }
            return .setVisibility(op == "setSidebarVisibility" ? .sidebar : .tabBar, tab: try reader.requiredIdentifier("tab"), visibility)
        case "setTabOrder":
            try reader.rejectUnknown(["op", "section", "tabOrder"])
            guard let order = try reader.identifierArray("tabOrder", checked: true, max: Customization.maxOrderLength) else {
                throw MalformedDocument(pointer: reader.path("tabOrder"), code: .missingField, detail: "\"tabOrder\" is required")
            }
            return .setTabOrder(section: try reader.requiredIdentifier("section"), tabOrder: order)
        case "moveTab":
            try reader.rejectUnknown(["op", "section", "tab", "toIndex"])
            guard let index = try reader.integer("toIndex") else {
                throw MalformedDocument(pointer: reader.path("toIndex"), code: .missingField, detail: "\"toIndex\" is required")
            }
            return .moveTab(section: try reader.requiredIdentifier("section"), tab: try reader.requiredIdentifier("tab"), toIndex: index)
        case "setTabBarOrder":
            try reader.rejectUnknown(["op", "tabBarOrder"])
            guard let order = try reader.identifierArray("tabBarOrder", checked: true, max: Customization.maxOrderLength) else {
                throw MalformedDocument(pointer: reader.path("tabBarOrder"), code: .missingField, detail: "\"tabBarOrder\" is required")
            }
            return .setTabBarOrder(order)
        case "setSectionExpanded":
            try reader.rejectUnknown(["op", "section", "expanded"])
            guard let expanded = try reader.bool("expanded") else {
                throw MalformedDocument(pointer: reader.path("expanded"), code: .missingField, detail: "\"expanded\" is required")
            }
            return .setSectionExpanded(section: try reader.requiredIdentifier("section"), expanded: expanded)
        case "setDynamicTabs":
            try reader.rejectUnknown(["op", "section", "tabs"])
            let tabs = try Customization.DynamicTab.decodeList(reader, "tabs", checked: true)
            return .setDynamicTabs(section: try reader.requiredIdentifier("section"), tabs: tabs)
        case "resetVisibility":
            try reader.rejectUnknown(["op", "placement"])
            return .resetVisibility(try reader.strictEnum("placement", ResetScope.self) ?? .sidebar)
        case "resetSectionOrder":
            try reader.rejectUnknown(["op", "section"])
            let section = try reader.string("section").map { Identifier($0) }
            if let section { try Customization.checkId(section, at: reader.path("section")) }
            return .resetSectionOrder(section: section)
        case "resetTabBarOrder":
            try reader.rejectUnknown(["op"])
            return .resetTabBarOrder
        default:
            throw MalformedDocument(pointer: reader.path("op"), code: .invalidValue, detail: "unknown op \(ClientText.quoted(op))")
        }
    }
}
