/// The files the binary serves, embedded at build time by SwiftPM (`resources: [.embedInCode(…)]` in Package.swift)
/// from their only copies, `openapi.yaml` and `console/` at the top of the repository (this folder links to them).
/// Edit those; the next build embeds them. Nothing here is generated into git, and no file sits beside the binary.
package enum EmbeddedFiles {
    /// `openapi.yaml`, byte for byte: what `GET /openapi.yaml` serves.
    package static var openAPI: [UInt8] { PackageResources.openapi_yaml }

    /// The operator console, every file of `console/` by name, byte for byte. SwiftPM names each resource after
    /// its file (`json-lines.js` is `json_lines_js`): a file added to `console/` is added here too (ConsoleTests
    /// fails while one is missing).
    package static let console: [(name: String, bytes: [UInt8])] = [
        ("api.js", PackageResources.api_js),
        ("app.js", PackageResources.app_js),
        ("apps.js", PackageResources.apps_js),
        ("audit.js", PackageResources.audit_js),
        ("console.css", PackageResources.console_css),
        ("dom.js", PackageResources.dom_js),
        ("history.js", PackageResources.history_js),
        ("icon.svg", PackageResources.icon_svg),
        ("index.html", PackageResources.index_html),
        ("json-lines.js", PackageResources.json_lines_js),
        ("layout-drawing.js", PackageResources.layout_drawing_js),
        ("layout-preview.js", PackageResources.layout_preview_js),
        ("live.js", PackageResources.live_js),
        ("picker.js", PackageResources.picker_js),
        ("schema-diff.js", PackageResources.schema_diff_js),
        ("schemas.js", PackageResources.schemas_js),
        ("stats.js", PackageResources.stats_js),
        ("tokens.js", PackageResources.tokens_js),
        ("user.js", PackageResources.user_js),
        ("users.js", PackageResources.users_js),
        ("versions.js", PackageResources.versions_js),
    ]
}
