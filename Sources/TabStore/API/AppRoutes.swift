import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
/// The operator's apps: create, list, read, delete, rotate the signing secret, and usage statistics.
struct AppRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("POST", "/v1/apps", access: .operatorOnly, body: .json, createApp)
        builder.add("GET", "/v1/apps", access: .operatorOnly, body: .empty, listApps)
        builder.add("GET", "/v1/apps/{appId}", access: .operatorOnly, body: .empty, getApp)
        builder.add("DELETE", "/v1/apps/{appId}", access: .operatorOnly, body: .empty, deleteApp)
        builder.add("POST", "/v1/apps/{appId}/signing-secret", access: .operatorOnly, body: .empty, rotateSecret)
        builder.add("GET", "/v1/apps/{appId}/stats", access: .operatorOnly, body: .empty, stats)
    }

    static func appJSON(_ app: AppRecord) -> JSONValue {
        .object(JSONObject([
            ("id", .string(app.id)), ("name", .string(app.name)), ("createdAt", .string(app.createdAt)),
            ("schemaVersion", .integer(app.schemaVersion)),
        ]))
    }

    func createApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let reader = try ObjectReader(try request.jsonBody(), at: "")
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
            app = try await services.store.createApp(id: id, name: name, signingSecret: secret, createdAt: Timestamp.now())
        } catch StoreConflict.alreadyExists {
            throw APIError(status: 409, slug: .appExists, title: "Conflict", detail: "an app with id \"\(id)\" already exists")
        }
        services.apps.invalidate(Identifier(id))
        guard case .object(var body) = Self.appJSON(app) else { preconditionFailure("appJSON makes an object") }
        // The signing secret is shown once, here; GET never returns it.
        body["signingSecret"] = .string(secret)
        return .json(201, .object(body), headers: HTTPHeaders([("Location", "/v1/apps/\(app.id)"), ("Cache-Control", "no-store")]))
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
        let page = try await services.store.listApps(after: cursor, limit: limit)
        let next: JSONValue = page.count == limit ? .string(page.last!.id) : .null
        return .json(200, .object(JSONObject([("apps", .array(page.map(Self.appJSON))), ("nextCursor", next)])))
    }

    func getApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        return .json(200, Self.appJSON(try await services.requireApp(context).app))
    }

    func deleteApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let appId = try context.appId()
        let deleted = try await services.store.deleteApp(appId.text)
        services.apps.invalidate(appId)
        services.changes.appDeleted(appId)
        guard deleted else { throw APIError.notFound(.appNotFound, "no app \"\(appId)\"") }
        return HTTPResponse(status: 204)
    }

    func rotateSecret(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let appId = try context.appId()
        let secret = Crypto.newSecret()
        do {
            try await services.store.rotateSecret(appId: appId.text, signingSecret: secret)
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        }
        services.apps.invalidate(appId)
        // Streams and long polls outlive their request's check: those the old secret authorized end now.
        services.changes.secretRotated(appId)
        return .json(200, ["signingSecret": .string(secret)], headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    func stats(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let schema = entry.schema
        var users = 0
        var stored = 0
        var hidden: [Identifier: PerPlacement<Int>] = [:]
        for info in schema?.allTabs ?? [] { hidden[info.tab.id] = PerPlacement(sidebar: 0, tabBar: 0) }
        let unreadable = try await services.forEachReadableCustomization(Identifier(entry.app.id)) { record, decoded in
            stored += 1
            var customization = decoded
            if let schema, record.schemaVersion != schema.version { customization = Reconciler.reconcile(customization, with: schema) }
            if customization.sameChoices(as: .empty) { return }
            users += 1
            // Counted per tab of the current schema only: ids a user names that the schema lacks are not
            // tabs, and counting them would let users grow this answer without bound.
            for (id, choice) in customization.tabs where hidden[id] != nil {
                for placement in Placement.allCases where choice[placement] == .hidden {
                    hidden[id]![placement] += 1
                }
            }
        }
        let tabs = JSONObject(hidden.keys.sorted().map { id in
            (id.text, .object(JSONObject([("sidebarHidden", .integer(hidden[id]!.sidebar)), ("tabBarHidden", .integer(hidden[id]!.tabBar))])))
        })
        return .json(200, .object(JSONObject([
            ("appId", .string(entry.app.id)), ("schemaVersion", .integer(schema?.version ?? 0)),
            ("usersWithCustomization", .integer(users)), ("storedCustomizations", .integer(stored + unreadable)),
            ("unreadableCustomizations", .integer(unreadable)), ("tabs", .object(tabs)),
        ])))
    }
}
