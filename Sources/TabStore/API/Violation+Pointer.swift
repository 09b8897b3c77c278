import TabStoreDomain
import TabStoreSupport
/// Where a violation is, as the problem document's `pointer` (RFC 6901) into the request body: the domain
/// names operations and document entries, the API spells them as the wire format has them.
extension ViolationLocation {
    package var pointer: String {
        switch self {
        case .document:
            return ""
        case .operation(let index, let field):
            let operation = JSONPointer.append("/operations", index)
            return field.map { $0.pointer(in: operation) } ?? operation
        case .tabVisibility(let tab, let placement):
            return JSONPointer.append(JSONPointer.append("/tabs", tab.text), placement == .sidebar ? "sidebarVisibility" : "tabBarVisibility")
        case .sectionTabOrder(let section, let item):
            return Self.list(JSONPointer.append(JSONPointer.append("/sections", section.text), "tabOrder"), item)
        case .sectionExpanded(let section):
            return JSONPointer.append(JSONPointer.append("/sections", section.text), "expanded")
        case .tabBarOrder(let item):
            return Self.list("/tabBarOrder", item)
        case .dynamicTabs(let section, let item, let member):
            return Self.entry(JSONPointer.append("/dynamicTabs", section.text), item, member)
        case .pointer(let pointer):
            return pointer
        }
    }

    /// An id list, or one id of it.
    static func list(_ pointer: String, _ item: Int?) -> String { item.map { JSONPointer.append(pointer, $0) } ?? pointer }

    /// A list of data-driven tabs, one tab of it, or one member of that tab.
    static func entry(_ pointer: String, _ item: Int?, _ member: DynamicTabMember?) -> String {
        let entry = list(pointer, item)
        guard item != nil, let member else { return entry }
        return JSONPointer.append(entry, member.rawValue)
    }
}

extension OperationField {
    /// The member of the operation object (docs/api.md "Operations (PATCH)"), or one id of its list.
    func pointer(in operation: String) -> String {
        switch self {
        case .tab: JSONPointer.append(operation, "tab")
        case .section: JSONPointer.append(operation, "section")
        case .visibility: JSONPointer.append(operation, "visibility")
        case .toIndex: JSONPointer.append(operation, "toIndex")
        case .tabOrder(let item): ViolationLocation.list(JSONPointer.append(operation, "tabOrder"), item)
        case .tabBarOrder(let item): ViolationLocation.list(JSONPointer.append(operation, "tabBarOrder"), item)
        case .tabs(let item, let member): ViolationLocation.entry(JSONPointer.append(operation, "tabs"), item, member)
        }
    }
}

extension Violation {
    /// The problem document's `pointer` for this violation.
    package var pointer: String { location.pointer }
}
