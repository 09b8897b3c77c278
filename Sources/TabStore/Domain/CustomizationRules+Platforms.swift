/// Where a user's choices shape a layout (docs/domain.md "Platforms and styles": in SwiftUI the sidebarAdaptable
/// style supports customization of the tab bar and sidebar on iPad, and the customization has no effect on other
/// platforms or on a TabViewStyle that does not support it).
extension CustomizationRules {
    /// Whether the user's choices apply for a client on `platform` drawing `style`: always when the client names no
    /// platform (as in the first version); on iPadOS with `sidebarAdaptable` (the style a request without `style`
    /// is taken to use, as every SwiftUI example of customization does); and on every platform the schema lists in
    /// `customizablePlatforms`, whatever its style (the app shares one person's choices across its clients).
    package static func appliesCustomization(_ schema: TabSchema, platform: Platform?, style: TabViewStyle?) -> Bool {
        guard let platform else { return true }
        if schema.customizablePlatforms.contains(platform) { return true }
        return platform == .iPadOS && (style ?? .sidebarAdaptable) == .sidebarAdaptable
    }
}
