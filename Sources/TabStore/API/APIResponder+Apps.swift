import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
extension APIResponder {
    static func appJSON(_ app: AppRecord) -> JSONValue {
        .object(JSONObject([
            ("id", .string(app.id)), ("name", .string(app.name)), ("createdAt", .string(app.createdAt)),
            ("schemaVersion", .integer(app.schemaVersion)),
        ]))
    }

    func createApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let reader = try ObjectReader(try jsonBody(request), at: "")
        try reader.rejectUnknown(["id", "name"])
        let id = try reader.requiredString("id")
        let name = try reader.requiredString("name")
        var problems: [Violation] = []
        if !Identifier(id).isValidAppId {
            problems.append(Violation(pointer: "/id", code: .invalidId, detail: "an app id is 1-128 bytes of A-Z a-z 0-9 . _ -"))
        }
        if name.isEmpty || name.utf8.count > TabSchema.maxTitleBytes || !Identifier.isPrintable(name) {
            problems.append(Violation(pointer: "/name", code: .invalidName, detail: "a name is 1-\(TabSchema.maxTitleBytes) UTF-8 bytes without control characters"))
        }
        if !problems.isEmpty { throw RuleRefusal(problems) }
        let secret = Crypto.newSecret()
        let app: AppRecord
        do {
            app = try await store.createApp(id: id, name: name, signingSecret: secret, createdAt: Timestamp.now())
        } catch StoreConflict.alreadyExists {
            throw APIError(status: 409, slug: .appExists, title: "Conflict", detail: "an app with id \"\(id)\" already exists")
        }
        apps.invalidate(Identifier(id))
        guard case .object(var body) = Self.appJSON(app) else { preconditionFailure("appJSON makes an object") }
        // The signing secret is shown once, here; GET never returns it.
        body["signingSecret"] = .string(secret)
        return json(201, .object(body), headers: HTTPHeaders([("Location", "/v1/apps/\(app.id)"), ("Cache-Control", "no-store")]))
    }

    func listApps(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        var limit = APIConfiguration.defaultPageSize
        if let text = request.queryParameter("limit") {
            guard let value = Int(text), (1...APIConfiguration.maxPageSize).contains(value) else {
                throw APIError.badRequest(.invalidParameter, "limit must be an integer from 1 to \(APIConfiguration.maxPageSize)")
            }
            limit = value
        }
        let cursor = request.queryParameter("cursor")
        if let cursor, !Identifier(cursor).isValidAppId {
            throw APIError.badRequest(.invalidParameter, "cursor must be an app id, as nextCursor gives it")
        }
        let page = try await store.listApps(after: cursor, limit: limit)
        let next: JSONValue = page.count == limit ? .string(page.last!.id) : .null
        return json(200, .object(JSONObject([("apps", .array(page.map(Self.appJSON))), ("nextCursor", next)])))
    }

    func getApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        return json(200, Self.appJSON(try await requireApp(context).app))
    }

    func deleteApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let appId = try Self.appId(context)
        let deleted = try await store.deleteApp(appId.text)
        apps.invalidate(appId)
        guard deleted else { throw APIError.notFound(.appNotFound, "no app \"\(appId)\"") }
        return HTTPResponse(status: 204)
    }

    func rotateSecret(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let appId = try Self.appId(context)
        let secret = Crypto.newSecret()
        do {
            try await store.rotateSecret(appId: appId.text, signingSecret: secret)
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        }
        apps.invalidate(appId)
        return json(200, ["signingSecret": .string(secret)], headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }
}
