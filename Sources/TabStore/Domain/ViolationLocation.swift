import TabStoreSupport
/// Where in a request a violation is, as the domain knows it: an operation of a PATCH and its field, or an
/// entry of a PUT document. The API writes it as an RFC 6901 JSON pointer (`API/Violation+Pointer.swift`),
/// so the rules never spell the wire format.
package enum ViolationLocation: Sendable, Equatable {
    /// The whole request document: a check on the whole result when no operation or entry can be named.
    case document
    /// A PATCH operation by its index in `operations`, or one of its fields.
    case operation(Int, field: OperationField?)
    /// A PUT document's visibility of a tab in a placement (`tabs.<id>.sidebarVisibility`).
    case tabVisibility(tab: Identifier, Placement)
    /// A PUT document's `tabOrder` of a section, or one id of it by index.
    case sectionTabOrder(section: Identifier, item: Int?)
    /// A PUT document's `expanded` of a section.
    case sectionExpanded(section: Identifier)
    /// A PUT document's `tabBarOrder`, or one id of it by index.
    case tabBarOrder(item: Int?)
    /// A PUT document's list of data-driven tabs of a section (`dynamicTabs.<section>`), one tab of it by index,
    /// or one member of that tab.
    case dynamicTabs(section: Identifier, item: Int?, member: DynamicTabMember?)
    /// A place a decoder named while it read the JSON (a shape error, a schema rule): the decoders walk the
    /// document member by member, so what they have is already the RFC 6901 pointer they built on the way.
    case pointer(String)
}

/// A field of a PATCH operation a refusal can name; the lists can also be named one entry at a time.
package enum OperationField: Sendable, Equatable {
    case tab, section, visibility, toIndex
    case tabOrder(item: Int?)
    case tabBarOrder(item: Int?)
    /// `setDynamicTabs`' `tabs`, one tab of it, or one member of that tab.
    case tabs(item: Int?, member: DynamicTabMember?)

    /// The index of the entry named in a list, nil for the field as a whole.
    package var item: Int? {
        switch self {
        case .tabOrder(let item), .tabBarOrder(let item), .tabs(let item, _): item
        case .tab, .section, .visibility, .toIndex: nil
        }
    }
}

/// A member of one data-driven tab (`Customization.DynamicTab`) a refusal can name.
package enum DynamicTabMember: String, Sendable, Equatable {
    case id, title, systemImage, image
}
