/// What a client asks a layout for: its size class and, since v1.1, its platform and `TabViewStyle`
/// (docs/domain.md "Platforms and styles"). Without a platform the layout is the first version's.
package struct LayoutRequest: Sendable, Equatable {
    package var sizeClass: SizeClass
    package var platform: Platform?
    package var style: TabViewStyle?

    package init(sizeClass: SizeClass, platform: Platform? = nil, style: TabViewStyle? = nil) {
        self.sizeClass = sizeClass
        self.platform = platform
        self.style = style
    }

    /// The shape the client's `TabView` takes. macOS and visionOS always show the sidebar (visionOS as an
    /// ornament, with the same lists), iPadOS in `regular`; iOS and tvOS only ever show the tab bar of `compact`.
    /// `tabBarOnly` never shows a sidebar. Without a platform the size class decides, as in the first version.
    package var shape: Layout.Shape {
        switch platform {
        case .iOS, .tvOS: return .compact
        case .macOS, .visionOS: return style == .tabBarOnly ? .tabBar : .sidebar
        case .iPadOS, nil:
            if sizeClass == .compact { return .compact }
            return style == .tabBarOnly ? .tabBar : .sidebar
        }
    }
}
