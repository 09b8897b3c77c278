import TabStoreAPI
import TabStoreApplication
import TabStoreAuth
import TabStoreDomain
import TabStoreStorage
import TabStoreStore
import TabStoreSupport
/// The demo app `tab-server demo` loads: Home/Alerts/Categories of Apple's `TabViewCustomization` example with a
/// search tab and a data-driven Playlists section (reorderable), shared with iOS and macOS clients (docs/domain.md
/// "Example").
/// The same document is `examples/schema.json` (a test keeps the two equal).
public enum DemoData {
    public static let appId = "com.myApp"
    public static let appName = "My App (demo)"
    public static let schemaJSON = #"""
{"items": [
  {"kind": "tab", "id": "com.myApp.home", "title": "Home", "systemImage": "house",
   "customizationBehavior": {"sidebar": "disabled", "tabBar": "disabled"}},
  {"kind": "tab", "id": "com.myApp.bell", "title": "Alerts", "systemImage": "bell"},
  {"kind": "tab", "id": "com.myApp.search", "title": "Search", "role": "search"},
  {"kind": "section", "id": "com.myApp.categories", "title": "Categories",
   "customizationBehavior": {"sidebar": "reorderable", "tabBar": "disabled"},
   "tabs": [{"kind": "tab", "id": "com.myApp.climate", "title": "Climate", "systemImage": "fan"},
            {"kind": "tab", "id": "com.myApp.lights", "title": "Lights", "systemImage": "lightbulb"}]},
  {"kind": "section", "id": "com.myApp.playlists", "title": "Playlists", "hiddenIn": ["compact"], "standIn": "com.myApp.home",
   "dynamicTabs": {"idPrefix": "com.myApp.playlist.", "customizationBehavior": {"sidebar": "reorderable"}}, "tabs": []}
], "customizablePlatforms": ["iPadOS", "macOS", "iOS"]}
"""#

    /// Creates the demo app with its schema when missing; returns the app.
    /// - Throws: storage errors.
    package static func load(into store: any TabStoreBackend) async throws -> AppRecord {
        var app = try await store.app(appId)
        if app == nil {
            app = try await store.createApp(id: appId, name: appName, signingSecret: Crypto.newSecret(), createdAt: Timestamp.now())
        }
        guard var app else { preconditionFailure("created above") }
        if app.schemaVersion == 0 {
            let schema = try TabSchema.parse(try JSONParser.parse(Array(schemaJSON.utf8)))
            let createdAt = Timestamp.now()
            _ = try await store.addSchemaVersion(appId: appId, expectedCurrent: 0, makeDocument: { version in
                schema.storedDocument(version: version, createdAt: createdAt)
            }, createdAt: createdAt)
            app = try await store.app(appId) ?? app
        }
        return app
    }
}
