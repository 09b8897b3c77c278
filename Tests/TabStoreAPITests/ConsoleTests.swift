import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
@testable import TabStore
import TabStoreTestSupport

/// The operator console's route (docs/console.md): what is served, with which headers, and that it is off
/// with `--console false`. The console in a browser is scripts/console-browser-test's.
@Suite("Operator console")
struct ConsoleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let folder = root.appendingPathComponent("console")
    static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
        + "form-action 'none'; frame-ancestors 'none'"

    static func files() throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
        }
        return files
    }

    static func served(_ name: String) -> String { name == "index.html" ? "/console" : "/console/\(name)" }

    @Test("the served assets are console/'s files, every one, byte for byte (a new file is named in EmbeddedFiles.console)")
    func embedded() throws {
        let files = try Self.files()
        #expect(Set(ConsoleRoutes.assets.map(\.path)) == Set(files.keys.map(Self.served)))
        for asset in ConsoleRoutes.assets {
            let name = asset.path == "/console" ? "index.html" : String(asset.path.dropFirst("/console/".count))
            #expect(asset.body == files[name], "\(name) differs from the embedded copy")
        }
    }

    @Test("GET /console: the page, with the Content-Security-Policy, nosniff, no-referrer and a strong ETag revalidated on each use")
    func page() async throws {
        let client = try InProcessClient { $0.console = true }
        let answer = await client.send(.get("/console"))
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "text/html; charset=utf-8")
        #expect(answer.header("Content-Security-Policy") == Self.policy)
        #expect(answer.header("X-Content-Type-Options") == "nosniff")
        #expect(answer.header("Referrer-Policy") == "no-referrer")
        #expect(answer.header("X-Frame-Options") == "DENY")
        #expect(answer.header("Cache-Control") == "no-cache")
        #expect(answer.etag?.range(of: #"^"[0-9a-f]{32}"$"#, options: .regularExpression) != nil)
        #expect(answer.text.contains(#"<script type="module" src="/console/app.js"></script>"#))
        #expect(answer.body == (try Self.files())["index.html"])
        // The assets hold no data: no token needed, and one sent changes nothing.
        #expect(await client.send(.get("/console").bearer("not-a-token")).status == 200)
        await client.close()
    }

    @Test("every asset: its media type, the same protections, 304 for its ETag (weak or in a list), HEAD without a body")
    func assets() async throws {
        let client = try InProcessClient { $0.console = true }
        let types = [
            "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml",
        ]
        var tags = Set<String>()
        for name in try Self.files().keys.sorted() {
            let path = Self.served(name)
            let answer = await client.send(.get(path))
            #expect(answer.status == 200, "\(path)")
            #expect(answer.header("Content-Type") == types[String(name.split(separator: ".").last ?? "")], "\(path)")
            #expect(answer.header("Content-Security-Policy") == Self.policy, "\(path)")
            #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(path)")
            let etag = try #require(answer.etag)
            tags.insert(etag)
            for condition in [etag, "W/\(etag)", "\"0\", \(etag)", "*"] {
                let again = await client.send(.get(path).ifNoneMatch(condition))
                #expect(again.status == 304, "\(path) \(condition)")
                #expect(again.body.isEmpty && again.etag == etag, "\(path)")
                #expect(again.header("Content-Security-Policy") == Self.policy && again.header("Cache-Control") == "no-cache", "\(path)")
            }
            #expect(await client.send(.get(path).ifNoneMatch("\"0\"")).status == 200)
            let head = await client.send(.head(path))
            #expect(head.status == 200 && head.body.isEmpty && head.etag == etag, "\(path)")
        }
        #expect(tags.count == ConsoleRoutes.assets.count, "each asset has its own ETag")
        #expect(await client.send(.get("/console/missing.js")).status == 404)
        #expect(await client.send(.post("/console")).status == 405)
        await client.close()
    }

    @Test("GET /console/ (a trailing slash) is the page too, with the same headers and ETag; other slashes are not")
    func trailingSlash() async throws {
        let client = try InProcessClient { $0.console = true }
        let plain = await client.send(.get("/console"))
        let slashed = await client.send(.get("/console/"))
        #expect(slashed.status == 200)
        #expect(slashed.header("Content-Type") == "text/html; charset=utf-8")
        #expect(slashed.header("Content-Security-Policy") == Self.policy)
        #expect(slashed.etag == plain.etag && slashed.body == plain.body)
        #expect(await client.send(.get("/console/").ifNoneMatch(try #require(plain.etag))).status == 304)
        #expect(await client.send(.get("/console/app.js/")).status == 404)
        await client.close()
    }

    @Test("--console false (or TAB_SERVER_CONSOLE) turns it off: every console path is 404; on by default")
    func disabled() async throws {
        #expect(try ServiceOptions.parse([], environment: [:]).0.console)
        #expect(try !ServiceOptions.parse(["--console", "false"], environment: [:]).0.console)
        #expect(try !ServiceOptions.parse([], environment: ["TAB_SERVER_CONSOLE": "off"]).0.console)
        #expect(try ServiceOptions.parse(["--console=true"], environment: ["TAB_SERVER_CONSOLE": "false"]).0.console)
        #expect(throws: ServiceOptions.Invalid.self) { try ServiceOptions.parse(["--console", "maybe"], environment: [:]) }
        try await withLiveService(adjust: { $0.console = false }) { live in
            for name in try Self.files().keys {
                let answer = try await live.send(.get(Self.served(name)))
                #expect(answer.status == 404, "\(name)")
                #expect(answer.problemType == "urn:tabstore:problem:no-route")
                #expect(answer.header("Content-Security-Policy") == nil)
            }
            #expect(try await live.send(.get("/healthz")).status == 200)
        }
        try await withLiveService { live in
            let answer = try await live.send(.get("/console"))
            #expect(answer.status == 200 && answer.header("Content-Security-Policy") == Self.policy)
        }
    }

    @Test("the console's routes are the only ones openapi.yaml does not list")
    func outsideTheAPI() throws {
        let yaml = try String(contentsOf: Self.root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let directory = TemporaryDirectory()
        var configuration = APIConfiguration()
        configuration.console = true
        let api = APIResponder(store: try SQLiteStore(configuration: .init(path: directory.file("x.sqlite"))), configuration: configuration)
        let routed = Set(api.router.routes.map { "\($0.method) \($0.pattern)" })
        let undocumented = routed.subtracting(OpenAPITests.documentedOperations(yaml))
        #expect(undocumented == Set(ConsoleRoutes.assets.flatMap(ConsoleRoutes.paths).map { "GET \($0)" }))
        #expect(api.router.routes.filter { $0.pattern.hasPrefix("/console") }.allSatisfy { $0.access == .anyone && $0.body == .empty })
    }

    @Test(
        "nothing the policy would refuse: no inline script, style or handler in the page; no eval or HTML strings in the scripts; every reference is served"
    )
    func policyFriendly() throws {
        let files = try Self.files()
        let page = String(decoding: try #require(files["index.html"]), as: UTF8.self)
        #expect(page.range(of: #"<script(?![^>]*\ssrc=)"#, options: .regularExpression) == nil, "a <script> without src")
        #expect(page.range(of: #"\sstyle\s*="#, options: .regularExpression) == nil, "a style attribute")
        #expect(page.range(of: #"<style"#, options: .regularExpression) == nil, "a <style> element")
        #expect(page.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "an inline event handler")
        let served = Set(files.keys.map(Self.served))
        for match in page.matches(of: /(?:src|href)="(\/[^"]*)"/) {
            #expect(served.contains(String(match.1)), "index.html names \(match.1), which is not served")
        }
        for (name, bytes) in files where name.hasSuffix(".js") {
            let script = String(decoding: bytes, as: UTF8.self)
            for refused in [
                "innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\"", "localStorage",
            ] {
                #expect(!script.contains(refused), "\(name) uses \(refused)")
            }
            for match in script.matches(of: /from "\.\/([a-z0-9-]+\.js)"/) {
                #expect(files[String(match.1)] != nil, "\(name) imports \(match.1), which console/ does not have")
            }
        }
    }
}
