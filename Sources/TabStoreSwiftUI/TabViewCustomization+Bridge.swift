#if canImport(SwiftUI) && !os(tvOS) && !os(watchOS)  // TabViewCustomization exists on iOS, iPadOS, Mac Catalyst, macOS, visionOS
import SwiftUI
import TabStoreClient

// SwiftUI's own types conform as they are: the members the protocols name are Apple's, with Apple's signatures
// (`subscript(tab:)`, `subscript(section:)`, `SectionCustomization.tabOrder` and `resetTabOrder()` since iOS 18.4
// and macOS 15.4; `resetVisibility()`, `resetSectionOrder()` and `Codable` since iOS 18 and macOS 15).

extension Visibility: TabVisibilityValue {
    /// SwiftUI's value for a TabStore visibility.
    public init(tabStoreVisibility: TabVisibility) {
        switch tabStoreVisibility {
        case .automatic: self = .automatic
        case .visible: self = .visible
        case .hidden: self = .hidden
        }
    }

    /// The TabStore visibility of this value.
    public var tabStoreVisibility: TabVisibility {
        switch self {
        case .visible: .visible
        case .hidden: .hidden
        default: .automatic
        }
    }
}

@available(iOS 18.4, macOS 15.4, visionOS 2.4, *)
extension TabViewCustomization.TabCustomization: TabCustomizationMembers {}

@available(iOS 18.4, macOS 15.4, visionOS 2.4, *)
extension TabViewCustomization.SectionCustomization: SectionCustomizationMembers {}

@available(iOS 18.4, macOS 15.4, visionOS 2.4, *)
extension TabViewCustomization: TabViewCustomizationMembers {}

/// The bridge over SwiftUI's `TabViewCustomization`: `@State var sync = TabViewCustomizationSync(queue: …)`, then
/// `TabView { … }.tabViewCustomization($sync.customization)`.
@available(iOS 18.4, macOS 15.4, visionOS 2.4, *)
public typealias TabViewCustomizationSync = TabCustomizationSync<TabViewCustomization>
#endif
