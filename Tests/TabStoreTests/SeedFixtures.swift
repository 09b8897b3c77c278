import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

/// Every example of the three seeds in ../shared/seeds, written as a TabStore schema.
enum Seeds {
    /// 000 customizationBehavior(_:for:), example 1: everything customizable.
    static let behaviorAllAutomatic = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// 000 example 2: Home `.disabled` for sidebar and tab bar.
    static let behaviorHomeDisabled = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house",
           "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories", "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// 000 example 3: the Categories section `.reorderable` in the sidebar.
    static let behaviorSectionReorderable = """
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
    static let behaviorPerPlacement = """
        {"items": [
          {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house"},
          {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
          {"kind": "section", "id": "com.myApp.categories", "title": "Categories",
           "customizationBehavior": {"sidebar": "reorderable", "tabBar": "disabled"}, "tabs": [
            {"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]}
        ]}
        """

    /// 001 hidden(_:): Browse only in compact; Library and Playlists only in regular.
    static let music = """
        {"items": [
          {"kind": "tab", "id": "listenNow", "title": "Listen Now", "systemImage": "play.circle"},
          {"kind": "tab", "id": "radio", "title": "Radio", "systemImage": "dot.radiowaves.left.and.right"},
          {"kind": "tab", "id": "search", "title": "Search", "systemImage": "magnifyingglass"},
          {"kind": "tab", "id": "browse", "title": "Browse", "systemImage": "list.bullet", "hiddenIn": ["regular"]},
          {"kind": "section", "id": "library", "title": "Library", "hiddenIn": ["compact"], "tabs": [
            {"kind": "tab", "id": "library.recentlyAdded", "title": "Recently Added", "systemImage": "clock"},
            {"kind": "tab", "id": "library.artists", "title": "Artists", "systemImage": "music.mic"}]},
          {"kind": "section", "id": "playlists", "title": "Playlists", "hiddenIn": ["compact"],
           "dynamicTabs": {"idPrefix": "playlist."}, "tabs": []}
        ]}
        """

    /// 002: the three static tabs of the new Tab API example.
    static let articleBasic = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"},
          {"kind": "tab", "id": "settings", "title": "Налаштування", "systemImage": "gearshape"}
        ]}
        """

    /// 002: the sidebarAdaptable example.
    static let articleAdaptable = """
        {"items": [
          {"kind": "tab", "id": "home", "title": "Головна", "systemImage": "house"},
          {"kind": "tab", "id": "library", "title": "Бібліотека", "systemImage": "books.vertical"},
          {"kind": "tab", "id": "profile", "title": "Профіль", "systemImage": "person.crop.circle"}
        ]}
        """

    /// 002: collections in sections and a search tab.
    static let articleCollections = """
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

    /// 002: the customization example: Home `.disabled` for both, collections `.reorderable` in the sidebar.
    static let articleCustomization = """
        {"items": [
          {"kind": "tab", "id": "app.tab.home", "title": "Головна", "systemImage": "house",
           "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
          {"kind": "section", "id": "app.section.collections", "title": "Мої колекції",
           "customizationBehavior": {"sidebar": "reorderable"},
           "dynamicTabs": {"idPrefix": "app.tab.collection."}, "tabs": []},
          {"kind": "tab", "id": "app.tab.search", "role": "search"}
        ]}
        """

    /// API.md's schema example.
    static let apiExample = """
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

    static let all: [(String, String)] = [
        ("000 all automatic", behaviorAllAutomatic), ("000 home disabled", behaviorHomeDisabled),
        ("000 section reorderable", behaviorSectionReorderable), ("000 per placement", behaviorPerPlacement),
        ("001 music", music), ("002 basic", articleBasic), ("002 adaptable", articleAdaptable),
        ("002 collections", articleCollections), ("002 customization", articleCustomization), ("API.md", apiExample),
    ]

    static func index(_ text: String, version: Int = 1) throws -> SchemaIndex {
        SchemaIndex(schema: try TabSchema.parse(try JSONParser.parse(Array(text.utf8))), version: version)
    }
}

func json(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

func ops(_ text: String) throws -> [Operation] { try Operation.decodeList(json(text)) }

/// The rule codes a refusal carries, or [] when the change was accepted.
func refusalCodes(_ body: () throws -> Void) -> [String] {
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
func violations(_ body: () throws -> Void) -> [Violation] {
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
