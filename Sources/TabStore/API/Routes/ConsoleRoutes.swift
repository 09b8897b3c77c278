import TabStoreAssets
import TabStoreAuth
import TabStoreHTTP
import TabStoreSupport

/// The operator console (docs/console.md): `GET /console` and its assets under `/console/…`, embedded in the
/// binary from console/ at build time (`EmbeddedFiles.console`, TabStoreAssets). The assets hold no data, so anyone
/// may fetch them; every data call the page makes carries the operator token the person pasted in.
/// Registered only with `--console true` (the default); off, every console path is the API's 404.
struct ConsoleRoutes: RouteGroup {
    /// No script, style, image or connection but the server's own; no inline script or style attribute, no
    /// `<base>`, no form posts, no framing. `data:` images are for nothing but the page's own SVG drawings.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// One served file: its bytes, media type and strong ETag (the first 128 bits of its SHA-256, hex).
    struct Asset: Sendable {
        let path: String
        let contentType: String
        let body: [UInt8]
        let etag: EntityTag
    }

    /// Every asset, by the path it is served at: `index.html` at `/console`, the others at `/console/<name>`.
    static let assets: [Asset] = EmbeddedFiles.console.map { file in
        let path = file.name == "index.html" ? "/console" : "/console/" + file.name
        return Asset(path: path, contentType: mediaType(of: file.name), body: file.bytes, etag: EntityTag(hexDigest(file.bytes)))
    }

    static func mediaType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        return "application/octet-stream"
    }

    static func hexDigest(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(Crypto.sha256(bytes).prefix(16).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// The paths each asset is served at: the page at `/console` and `/console/` alike (an address typed or
    /// bookmarked with the slash opens the console, not a 404), every other asset at its one path.
    static func paths(of asset: Asset) -> [String] {
        asset.path == "/console" ? ["/console", "/console/"] : [asset.path]
    }

    func register(on builder: inout Router.Builder) {
        for asset in Self.assets {
            let serve: Router.InlineHandler = { request, _ in try Self.serve(asset, to: request) }
            for path in Self.paths(of: asset) {
                builder.add("GET", path, access: .anyone, body: .empty, inline: serve) { request, _ in try Self.serve(asset, to: request) }
            }
        }
    }

    /// The headers of every console answer, 200 and 304 alike: the validators (revalidated on each use, so a
    /// new binary's console is picked up at once) and the page's protections.
    static func headers(_ asset: Asset) -> HTTPHeaders {
        var headers = Preconditions.validatorHeaders(asset.etag, cacheControl: "no-cache")
        headers.add("Content-Security-Policy", contentSecurityPolicy)
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Referrer-Policy", "no-referrer")
        headers.add("X-Frame-Options", "DENY")
        headers.add("Cross-Origin-Opener-Policy", "same-origin")
        headers.add("Cross-Origin-Resource-Policy", "same-origin")
        return headers
    }

    static func serve(_ asset: Asset, to request: HTTPRequest) throws -> HTTPResponse {
        let headers = Self.headers(asset)
        if let early = try Preconditions.earlyAnswer(to: request, etag: asset.etag, headers: headers) { return early }
        var answer = headers
        answer.add("Content-Type", asset.contentType)
        return HTTPResponse(status: 200, headers: answer, body: asset.body)
    }
}
