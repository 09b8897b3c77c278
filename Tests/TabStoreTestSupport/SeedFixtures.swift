import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

/// Example schemas, each a SwiftUI `TabView` written as a TabStore schema: "000" are the examples of Apple's
/// `customizationBehavior(_:for:)` documentation, "001" a music app with Browse, Library and Playlists, "002" an
/// article's TabViews (labels, search, collections, a top-level ForEach); docs/domain.md explains what they show.
package enum Seeds {
    /// 000 customizationBehavior(_:for:), example 1: everything customizable.
    package static let behaviorAllAutomatic = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// 000 example 2: Home `.disabled` for sidebar and tab bar, and no `.customizationID` ("If you turn off
    /// customization for both the sidebar and tab bar, then a customization ID isn't necessary"): the service
    /// derives its id.
    package static let behaviorHomeDisabled = """
        {"items": [
          {"kind": "tab", "title": "Home", "systemImage": "house",
           "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// The derived id of example 2's Home (`DerivedId`: top level, "Home", first of its title): written out here
    /// so a change of the rule cannot go unnoticed (clients rely on it across schema versions).
    package static let derivedHome: Identifier = "~derived.6b51f61e9603dc73"

    /// 000 example 3: the Categories section `.reorderable` in the sidebar.
    package static let behaviorSectionReorderable = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories",
           "customizationBehavior": {"sidebar": "reorderable"}, "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// 000 example 4: the section `.reorderable` in the sidebar and `.disabled` in the tab bar.
    package static let behaviorPerPlacement = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories",
           "customizationBehavior": {"sidebar": "reorderable", "tabBar": "disabled"}, "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// 001 hidden(_:): Browse only in compact; Library and Playlists only in regular. The app's selection code
    /// is the stand-ins: in compact Browse stands in for the sections' tabs (`selection = .browse`), in regular
    /// Recently Added stands in for Browse (`browseTabPath.last ?? .library(.recentlyAdded)`). Playlists come
    /// from data (`ForEach(playlists)`, `Tab(playlist.name, image: playlist.image, …)`).
    package static let music = """
        {"items": [
          {"kind": "tab", "id": "listenNow", "title": "Listen Now", "systemImage": "play.circle"},
          {"kind": "tab", "id": "radio", "title": "Radio", "systemImage": "dot.radiowaves.left.and.right"},
          {"kind": "tab", "id": "search", "title": "Search", "systemImage": "magnifyingglass"},
          {"kind": "tab", "id": "browse", "title": "Browse", "systemImage": "list.bullet", "hiddenIn": ["regular"],
           "standIn": "library.recentlyAdded"},
          {"kind": "section", "id": "library", "title": "Library", "hiddenIn": ["compact"], "standIn": "browse", "tabs": [
            {"kind": "tab", "id": "library.recentlyAdded", "title": "Recently Added", "systemImage": "clock"},
            {"kind": "tab", "id": "library.artists", "title": "Artists", "systemImage": "music.mic"}]},
          {"kind": "section", "id": "playlists", "title": "Playlists", "hiddenIn": ["compact"], "standIn": "browse",
           "dynamicTabs": {"idPrefix": "playlist."}, "tabs": []}
        ]}
        """

    /// 001: the user's playlists (`[Playlist("All Playlists"), Playlist("Running")]`), as a client stores them.
    package static let musicPlaylists = """
        {"op": "setDynamicTabs", "section": "playlists", "tabs": [
          {"id": "playlist.all", "title": "All Playlists", "image": "playlist-all"},
          {"id": "playlist.running", "title": "Running", "image": "playlist-running"}]}
        """

    /// 002: the legacy `tabItem`/`tag` example the article migrates from.
    package static let articleLegacy = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"}
        ]}
        """

    /// 002: the three static tabs of the new Tab API example.
    package static let articleBasic = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"},
          {"kind": "tab", "id": "settings", "title": "Налаштування", "systemImage": "gearshape"}
        ]}
        """

    /// 002: a custom label (`Label { Text("Головна") } icon: { Image("home-custom") }`): an asset image.
    package static let articleCustomLabel = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "image": "home-custom"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"}
        ]}
        """

    /// 002: the sidebarAdaptable example.
    package static let articleAdaptable = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"},
          {"kind": "tab", "id": "profile", "title": "Профіль", "systemImage": "person.crop.circle"}
        ]}
        """

    /// 002: "for a dynamic set of tabs (e.g. a list of playlists) TabView accepts ForEach directly inside:
    /// `ForEach(playlists) { p in Tab(p.name, systemImage: "music.note", value: p.id) { PlaylistView(p) } }`", placed
    /// among the article's three tabs (after Library). No `TabSection`: the playlists are top-level tabs. The item's `id`
    /// is what operations name the `ForEach` by (SwiftUI gives it none); `p.id` extends its `idPrefix`.
    package static let articleForEach = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"},
          {"kind": "forEach", "id": "playlists", "dynamicTabs": {"idPrefix": "playlist."}},
          {"kind": "tab", "id": "settings", "title": "Налаштування", "systemImage": "gearshape"}
        ]}
        """

    /// 002: a person's playlists as a client stores them for the `ForEach` above (`p.name`, `"music.note"`, `p.id`).
    package static let articlePlaylists = """
        {"op": "setDynamicTabs", "section": "playlists", "tabs": [
          {"id": "playlist.morning", "title": "Ранок", "systemImage": "music.note"},
          {"id": "playlist.run", "title": "Біг", "systemImage": "music.note"},
          {"id": "playlist.focus", "title": "Фокус", "systemImage": "music.note"}]}
        """

    /// 002: collections in sections (`ForEach(store.collections)` and `ForEach(store.sharedCollections)`) and a
    /// search tab given no label (`Tab(role: .search, value: AppTab.search)`).
    package static let articleCollections = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"},
          {"kind": "section", "id": "collections", "title": "Мої колекції",
           "dynamicTabs": {"idPrefix": "collection."}, "tabs": []},
          {"kind": "section", "id": "shared", "title": "Спільні",
           "dynamicTabs": {"idPrefix": "shared."}, "tabs": []},
          {"kind": "tab", "id": "search", "role": "search"}
        ]}
        """

    /// 002: the customization example: `.customizationBehavior(.reorderable, for: .sidebar)` on every tab of the
    /// `ForEach`, so on the section's `dynamicTabs`; Home `.disabled` for both placements, as the article advises
    /// ("always leave the home tab .disabled for .sidebar and .tabBar"), keeping its customization ID.
    package static let articleCustomization = """
        {"items": [
          {"kind": "tab", "id": "app.tab.home", "title": "Головна", "systemImage": "house",
           "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"kind": "section", "id": "app.section.collections", "title": "Мої колекції",
           "dynamicTabs": {"idPrefix": "app.tab.collection.", "customizationBehavior": {"sidebar": "reorderable"}}, "tabs": []}
        ]}
        """

    /// 002: a search tab given a label anyway (the article's pitfall: the label is ignored).
    package static let articleLabelledSearch = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "search", "title": "Знайти", "systemImage": "binoculars", "role": "search"}
        ]}
        """

    /// The API example's schema (docs/api.md, docs/domain.md).
    package static let apiExample = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house",
           "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"kind": "tab", "id": "com.myApp.search", "title": "Search", "role": "search"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories",
           "customizationBehavior": {"sidebar": "reorderable", "tabBar": "disabled"},
           "defaultVisibility": {"tabBar": "hidden"}, "hiddenIn": ["compact"],
           "tabs": [{"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
                    {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]},
          {"kind": "section", "id": "com.myApp.playlists", "title": "Playlists",
           "dynamicTabs": {"idPrefix": "com.myApp.playlist."}, "tabs": []}
        ]}
        """

    package static let all: [(String, String)] = [
        ("000 all automatic", behaviorAllAutomatic), ("000 home disabled", behaviorHomeDisabled),
        ("000 section reorderable", behaviorSectionReorderable), ("000 per placement", behaviorPerPlacement),
        ("001 music", music), ("002 legacy", articleLegacy), ("002 basic", articleBasic), ("002 custom label", articleCustomLabel),
        ("002 adaptable", articleAdaptable), ("002 collections", articleCollections), ("002 customization", articleCustomization),
        ("002 labelled search", articleLabelledSearch), ("002 ForEach", articleForEach), ("API example", apiExample),
    ]

    package static func index(_ text: String, version: Int = 1) throws -> SchemaIndex {
        SchemaIndex(schema: try TabSchema.parse(try JSONParser.parse(Array(text.utf8))), version: version)
    }
}

package func json(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

package func ops(_ text: String) throws -> [Operation] { try Operation.decodeList(json(text)) }

/// The rule codes a refusal carries, or [] when the change was accepted.
package func refusalCodes(_ body: () throws -> Void) -> [String] {
    do {
        try body()
        return []
    } catch let refusal as RuleRefusal {
        return refusal.violations.map(\.code.rawValue)
    } catch let malformed as MalformedDocument {
        return malformed.violations.map(\.code.rawValue)
    } catch {
        return ["unexpected: \(error)"]
    }
}

/// The violations a refusal carries, or [] when the change was accepted.
package func violations(_ body: () throws -> Void) -> [Violation] {
    do {
        try body()
        return []
    } catch let refusal as RuleRefusal {
        return refusal.violations
    } catch let malformed as MalformedDocument {
        return malformed.violations
    } catch {
        Issue.record("neither a refusal nor a malformed document: \(error)")
        return []
    }
}
