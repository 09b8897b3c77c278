import TabStoreHTTP
import TabStoreStore
import TabStoreSupport

/// The operator's list of an app's users (docs/api.md "Users of an app"): who has a stored customization.
struct AppUserRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("GET", "/v1/apps/{appId}/users", access: .operatorOnly, body: .empty, listUsers)
    }

    /// Most users one page lists, and how many it lists by default.
    static let maxPage = 100
    static let defaultPage = 50

    /// `GET /v1/apps/{appId}/users?prefix=P&after=ID&limit=N`: byte order of the ids; `prefix` and `after`
    /// are compared as bytes, each at most a user id's length (a longer one could match nothing anyway).
    func listUsers(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let limit = try CustomizationRoutes.integerParameter(request, "limit", in: 1...Self.maxPage) ?? Self.defaultPage
        let prefix = try Self.idParameter(request, "prefix", allowEmpty: true) ?? ""
        let after = try Self.idParameter(request, "after", allowEmpty: false)
        let entry = try await services.requireApp(context)
        let rows = try await services.store.users(appId: entry.app.id, prefix: prefix, after: after, limit: limit + 1)
        let listed = rows.prefix(limit)
        let next: JSONValue = rows.count > limit ? .string(listed.last!.userId) : .null
        let items: [JSONValue] = listed.map { user in
            .object(JSONObject([
                ("userId", .string(user.userId)), ("revision", .integer(user.revision)),
                ("schemaVersion", .integer(user.schemaVersion)), ("updatedAt", .string(user.updatedAt)),
            ]))
        }
        return .json(200, .object(JSONObject([("items", .array(items)), ("next", next)])), headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    /// A query parameter holding (part of) a user id: at most `Identifier.maxBytes` UTF-8 bytes, no control characters.
    /// - Throws: `APIError` 400 `invalid-parameter`.
    static func idParameter(_ request: HTTPRequest, _ name: String, allowEmpty: Bool) throws -> String? {
        guard let text = request.queryParameter(name) else { return nil }
        let bytes = allowEmpty ? "0-\(Identifier.maxBytes)" : "1-\(Identifier.maxBytes)"
        // A value that does not decode is refused, never read as empty (for `prefix`, that would list everyone).
        guard !request.queryParameterIsUndecodable(name) else {
            throw APIError.badRequest(.invalidParameter, "\(name) must be \(bytes) UTF-8 bytes (percent-encoded) without control characters")
        }
        if text.isEmpty && allowEmpty { return text }
        guard Identifier(text).isValidId else {
            throw APIError.badRequest(.invalidParameter, "\(name) must be \(bytes) UTF-8 bytes without control characters")
        }
        return text
    }
}
