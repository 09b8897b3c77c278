import Testing
@testable import TabStoreDomain
@testable import TabStoreSupport
import TabStoreTestSupport

extension LayoutGoldenTests {
    /// A music app's ForEach directly in the TabView (docs/domain.md "A top-level ForEach"): playlists between Library and Settings, reorderable in
    /// both
    /// placements; radio stations as ForEach makes them (hide, not move), only in compact, Library standing in for
    /// them; a data-driven section to show that More keeps sections' tabs after the bar's overflow; the app opts macOS in.
    static let forEachSchema = """
        {"items": [
          {"title": "Home", "systemImage": "house", "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"id": "library", "title": "Library", "systemImage": "books.vertical"},
          {"kind": "forEach", "id": "playlists",
           "dynamicTabs": {"idPrefix": "pl.", "customizationBehavior": {"sidebar": "reorderable", "tabBar": "reorderable"}}},
          {"id": "settings", "title": "Settings", "systemImage": "gearshape"},
          {"kind": "forEach", "id": "radio", "hiddenIn": ["regular"], "standIn": "library", "dynamicTabs": {"idPrefix": "st."}},
          {"id": "search", "role": "search"},
          {"kind": "section", "id": "shared", "title": "Shared", "dynamicTabs": {"idPrefix": "sh."}, "tabs": []}
        ], "customizablePlatforms": ["macOS"]}
        """

    /// Three playlists (Sleep moved first among them), two stations (News out of the bar), one shared collection, and
    /// the bar reordered: Focus, then Settings.
    static let forEachOperations = """
        {"operations": [
          {"op": "setDynamicTabs", "section": "playlists", "tabs": [
            {"id": "pl.run", "title": "Running"}, {"id": "pl.focus", "title": "Focus"}, {"id": "pl.sleep", "title": "Sleep"}]},
          {"op": "moveTab", "section": "playlists", "tab": "pl.sleep", "toIndex": 0},
          {"op": "setDynamicTabs", "section": "radio", "tabs": [{"id": "st.jazz", "title": "Jazz"}, {"id": "st.news", "title": "News"}]},
          {"op": "setTabBarVisibility", "tab": "st.news", "visibility": "hidden"},
          {"op": "setDynamicTabs", "section": "shared", "tabs": [{"id": "sh.a", "title": "A"}]},
          {"op": "setTabBarOrder", "tabBarOrder": ["pl.focus", "settings"]}]}
        """

    static let forEachGolden = """
        - - compact | applied | sidebar:  | bar: home pl.focus settings library | more: pl.sleep pl.run st.jazz sh.a | pinned: search | hidden: st.news | fallback: st.news>library
        - - regular | applied | sidebar: home library pl.sleep pl.run pl.focus settings shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        - sidebarAdaptable compact | applied | sidebar:  | bar: home pl.focus settings library | more: pl.sleep pl.run st.jazz sh.a | pinned: search | hidden: st.news | fallback: st.news>library
        - sidebarAdaptable regular | applied | sidebar: home library pl.sleep pl.run pl.focus settings shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        - tabBarOnly compact | applied | sidebar:  | bar: home pl.focus settings library | more: pl.sleep pl.run st.jazz sh.a | pinned: search | hidden: st.news | fallback: st.news>library
        - tabBarOnly regular | applied | sidebar:  | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        iOS - compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        iOS - regular | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings sh.a | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        iOS sidebarAdaptable compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        iOS sidebarAdaptable regular | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings sh.a | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        iOS tabBarOnly compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        iOS tabBarOnly regular | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings sh.a | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        iPadOS - compact | applied | sidebar:  | bar: home pl.focus settings library | more: pl.sleep pl.run st.jazz sh.a | pinned: search | hidden: st.news | fallback: st.news>library
        iPadOS - regular | applied | sidebar: home library pl.sleep pl.run pl.focus settings shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        iPadOS sidebarAdaptable compact | applied | sidebar:  | bar: home pl.focus settings library | more: pl.sleep pl.run st.jazz sh.a | pinned: search | hidden: st.news | fallback: st.news>library
        iPadOS sidebarAdaptable regular | applied | sidebar: home library pl.sleep pl.run pl.focus settings shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        iPadOS tabBarOnly compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        iPadOS tabBarOnly regular | defaults | sidebar:  | bar: home library pl.run pl.focus pl.sleep settings sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        macOS - compact | applied | sidebar: home library pl.sleep pl.run pl.focus settings st.jazz st.news shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run st.jazz sh.a | more:  | pinned: search | hidden:  | fallback: -
        macOS - regular | applied | sidebar: home library pl.sleep pl.run pl.focus settings shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        macOS sidebarAdaptable compact | applied | sidebar: home library pl.sleep pl.run pl.focus settings st.jazz st.news shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run st.jazz sh.a | more:  | pinned: search | hidden:  | fallback: -
        macOS sidebarAdaptable regular | applied | sidebar: home library pl.sleep pl.run pl.focus settings shared[sh.a] | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        macOS tabBarOnly compact | applied | sidebar:  | bar: home pl.focus settings library pl.sleep pl.run st.jazz sh.a | more:  | pinned: search | hidden: st.news | fallback: st.news>library
        macOS tabBarOnly regular | applied | sidebar:  | bar: home pl.focus settings library pl.sleep pl.run sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        visionOS - compact | defaults | sidebar: home library pl.run pl.focus pl.sleep settings st.jazz st.news shared[sh.a] | bar: home library pl.run pl.focus pl.sleep settings st.jazz st.news sh.a | more:  | pinned: search | hidden:  | fallback: -
        visionOS - regular | defaults | sidebar: home library pl.run pl.focus pl.sleep settings shared[sh.a] | bar: home library pl.run pl.focus pl.sleep settings sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        visionOS sidebarAdaptable compact | defaults | sidebar: home library pl.run pl.focus pl.sleep settings st.jazz st.news shared[sh.a] | bar: home library pl.run pl.focus pl.sleep settings st.jazz st.news sh.a | more:  | pinned: search | hidden:  | fallback: -
        visionOS sidebarAdaptable regular | defaults | sidebar: home library pl.run pl.focus pl.sleep settings shared[sh.a] | bar: home library pl.run pl.focus pl.sleep settings sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        visionOS tabBarOnly compact | defaults | sidebar:  | bar: home library pl.run pl.focus pl.sleep settings st.jazz st.news sh.a | more:  | pinned: search | hidden:  | fallback: -
        visionOS tabBarOnly regular | defaults | sidebar:  | bar: home library pl.run pl.focus pl.sleep settings sh.a | more:  | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        tvOS - compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        tvOS - regular | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings sh.a | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        tvOS sidebarAdaptable compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        tvOS sidebarAdaptable regular | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings sh.a | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        tvOS tabBarOnly compact | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings st.jazz st.news sh.a | pinned: search | hidden:  | fallback: -
        tvOS tabBarOnly regular | defaults | sidebar:  | bar: home library pl.run pl.focus | more: pl.sleep settings sh.a | pinned: search | hidden:  | fallback: st.jazz>library st.news>library
        """
}
