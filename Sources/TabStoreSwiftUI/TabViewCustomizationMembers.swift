import TabStoreClient

/// A visibility as SwiftUI's `Visibility` spells it: `automatic`, `visible`, `hidden`.
public protocol TabVisibilityValue {
    /// The value for a TabStore visibility.
    init(tabStoreVisibility: TabVisibility)
    /// The TabStore visibility of this value (`automatic` for one TabStore does not know).
    var tabStoreVisibility: TabVisibility { get }
}

/// The members of SwiftUI's `TabViewCustomization.TabCustomization` the bridge uses, as Apple documents them:
/// `sidebarVisibility` can be read and set, `tabBarVisibility` only read.
public protocol TabCustomizationMembers {
    /// SwiftUI's `Visibility`.
    associatedtype VisibilityValue: TabVisibilityValue
    /// The tab's visibility in the sidebar.
    var sidebarVisibility: VisibilityValue { get set }
    /// The tab's visibility in the tab bar (no setter in SwiftUI).
    var tabBarVisibility: VisibilityValue { get }
}

/// The members of SwiftUI's `TabViewCustomization.SectionCustomization`: `tabOrder` read only, `resetTabOrder()`.
public protocol SectionCustomizationMembers {
    /// The order of all the section's tabs once the person reordered it; nil while it has the builder order.
    var tabOrder: [String]? { get }
    /// Back to the builder order.
    mutating func resetTabOrder()
}

/// The members of SwiftUI's `TabViewCustomization` (iOS 18.4, macOS 15.4) the bridge reads and writes. SwiftUI's
/// type conforms in `TabViewCustomization+Bridge.swift`; tests use a fake that behaves as documented (an id it
/// never saw reads `automatic` and a nil order).
public protocol TabViewCustomizationMembers: Codable {
    /// SwiftUI's `TabViewCustomization.TabCustomization`.
    associatedtype TabMembers: TabCustomizationMembers
    /// SwiftUI's `TabViewCustomization.SectionCustomization`.
    associatedtype SectionMembers: SectionCustomizationMembers
    /// An empty customization (the builder's visibilities and order).
    init()
    /// The customization of the tab with customization id `id`.
    subscript(tab id: String) -> TabMembers { get set }
    /// The customization of the section with customization id `id`.
    subscript(section id: String) -> SectionMembers { get set }
    /// Every tab's sidebar visibility back to the default; the section orders stay.
    mutating func resetVisibility()
    /// Every section's order back to the default; the visibilities stay.
    mutating func resetSectionOrder()
}
