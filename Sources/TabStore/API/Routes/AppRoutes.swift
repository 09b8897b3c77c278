import TabStoreApplication
import TabStoreAuth
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// The operator's apps: create, list, read, delete, rotate the signing secret, and usage statistics.
struct AppRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("POST", "/v1/apps", access: .operatorOnly, body: .json, createApp)
        builder.add("GET", "/v1/apps", access: .operatorOnly, body: .empty, listApps)
        builder.add("GET", "/v1/apps/{appId}", access: .operatorOnly, body: .empty, getApp)
        builder.add("PATCH", "/v1/apps/{appId}", access: .operatorOnly, body: .json, updateApp)
        builder.add("DELETE", "/v1/apps/{appId}", access: .operatorOnly, body: .empty, deleteApp)
        builder.add("POST", "/v1/apps/{appId}/signing-secret", access: .operatorOnly, body: .empty, rotateSecret)
        builder.add("GET", "/v1/apps/{appId}/stats", access: .operatorOnly, body: .empty, stats)
    }

    static func appJSON(_ app: AppRecord) -> JSONValue {
        .object(JSONObject([
            ("id", .string(app.id)), ("name", .string(app.name)), ("createdAt", .string(app.createdAt)),
            ("schemaVersion", .integer(app.schemaVersion)), ("minimumSchemaVersion", .integer(app.supportedFrom)),
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
            problems.append(
                Violation(
                    pointer: "/name", code: .invalidName, detail: "a name is 1-\(TabSchema.maxTitleBytes) UTF-8 bytes without control characters"))
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
        services.historyPages.removeAll { $0.hasFirstPart(appId.text) }
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
        // Hidden counts as the clients of one version see them (`?schemaVersion=`), by default the current one's.
        let schema: SchemaIndex? = entry.schema == nil && request.queryParameter("schemaVersion") == nil ? nil
            : try await services.servedSchema(request, entry)
        let minimum = entry.app.supportedFrom
        var lastWrittenBy: [Int: Int] = [:]
        var retiredWriters = 0
        var users = 0
        var stored = 0
        var hidden: [Identifier: PerPlacement<Int>] = [:]
        for info in schema?.allTabs ?? [] { hidden[info.tab.id] = PerPlacement(sidebar: 0, tabBar: 0) }
        let unreadable = try await services.application.forEachReadableCustomization(Identifier(entry.app.id)) { record, decoded in
            stored += 1
            let writer = record.writtenUnder
            if writer < minimum { retiredWriters += 1 } else { lastWrittenBy[writer, default: 0] += 1 }
            var customization = decoded
            if let schema, record.servedAsStoredUnder != schema.version { customization = Reconciler.reconcile(customization, with: schema) }
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
        // Every supported version, oldest first: how many users' last write came from a client of it.
        let versions: [JSONValue] = entry.schema.map { current in
            (min(minimum, current.version)...current.version).map { version in
                .object(JSONObject([("schemaVersion", .integer(version)), ("lastWrittenBy", .integer(lastWrittenBy[version] ?? 0))]))
            }
        } ?? []
        return .json(200, .object(JSONObject([
            ("appId", .string(entry.app.id)), ("schemaVersion", .integer(schema?.version ?? 0)),
            ("minimumSchemaVersion", .integer(minimum)), ("versions", .array(versions)),
            ("retiredWriters", .integer(retiredWriters)),
            ("usersWithCustomization", .integer(users)), ("storedCustomizations", .integer(stored + unreadable)),
            ("unreadableCustomizations", .integer(unreadable)), ("tabs", .object(tabs)),
        ])))
    }

    // MARK: - The minimum schema version

    /// `PATCH /v1/apps/{appId}` `{"minimumSchemaVersion": n}`: the oldest version whose clients are served
    /// (docs/domain.md "Several app versions at once"). Raising it drops nothing at once: each user's next write drops the choices no
    /// supported version can name. `?dryRun=true` reports, per user, what those writes would drop.
    func updateApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let body = try request.jsonBody()
        let reader = try ObjectReader(body, at: "")
        try reader.rejectUnknown(["minimumSchemaVersion"])
        guard let minimum = try reader.integer("minimumSchemaVersion") else {
            throw MalformedDocument(pointer: "/minimumSchemaVersion", code: .missingField, detail: "\"minimumSchemaVersion\" is required")
        }
        let dryRun = try Self.dryRunParameter(request)
        // 400 with or without dryRun.
        _ = try CustomizationRoutes.integerParameter(request, "limit", in: 1...Self.maxReportPage)
        _ = try AppUserRoutes.idParameter(request, "after", allowEmpty: false)
        let entry = try await services.requireApp(context)
        let current = entry.app.schemaVersion
        // A re-created app's versions start above its predecessor's (`schemaVersionFloor`): those are not its versions.
        guard minimum > entry.app.schemaVersionFloor, minimum <= current else {
            throw RuleRefusal([Violation(pointer: "/minimumSchemaVersion", code: .unknownSchemaVersion,
                                         detail: current == 0 ? "app \"\(entry.app.id)\" has no schema version yet"
                                             : "the minimum is a registered schema version, \(entry.app.schemaVersionFloor + 1) to \(current)")])
        }
        // Read again, not from the cache: a write may have recorded meanwhile that it dropped choices under the minimum.
        let applied = try await services.store.app(entry.app.id)?.minimumApplied ?? entry.app.minimumApplied
        if minimum < applied { throw Self.minimumApplied(applied) }
        if dryRun { return .json(200, try await minimumReport(request, entry, minimum: minimum)) }
        let appId = Identifier(entry.app.id)
        let app: AppRecord
        do {
            app = try await services.store.setMinimumSchemaVersion(appId: entry.app.id, minimum: minimum)
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        } catch StoreConflict.minimumApplied(let applied) {
            throw Self.minimumApplied(applied)
        } catch StoreConflict.revisionMismatch(let now) {
            throw RuleRefusal([Violation(pointer: "/minimumSchemaVersion", code: .unknownSchemaVersion,
                                         detail: "the minimum is a registered schema version, at most \(now)")])
        }
        services.apps.invalidate(appId)
        // Streams and long polls of versions now retired end; the others see nothing new.
        if app.minimumSchemaVersion > entry.app.minimumSchemaVersion { services.application.republish(appId: appId) }
        return .json(200, Self.appJSON(app))
    }

    /// Most affected users one page of the minimum's dry run lists.
    static let maxReportPage = 100

    private static func minimumApplied(_ applied: Int) -> APIError {
        APIError(status: 409, slug: .minimumSchemaVersionApplied, title: "Conflict",
                 detail: "writes already dropped choices only versions below \(applied) had: the minimum cannot go below \(applied) again")
    }

    /// `dryRun` of a write that can be rehearsed: `true` or `false` (absent: false). Any query parameter but it,
    /// `limit` and `after` is 400, so a misspelled one (`dryrun`, `dry_run`) never does the real thing.
    static func dryRunParameter(_ request: HTTPRequest) throws -> Bool {
        if let unknown = request.unknownQueryParameter(allowed: ["dryRun", "limit", "after"]) {
            throw APIError.badRequest(.invalidParameter, "unknown query parameter \(ClientText.quoted(unknown)); this route takes dryRun, limit and after")
        }
        switch request.queryParameter("dryRun") {
        case nil, "false": return false
        case "true": return true
        default: throw APIError.badRequest(.invalidParameter, "dryRun must be true or false")
        }
    }

    /// What raising the minimum to `minimum` would drop: per stored customization, the ids its choices name that no
    /// version from `minimum` to the current one has.
    private func minimumReport(_ request: HTTPRequest, _ entry: AppCache.Entry, minimum: Int) async throws -> JSONValue {
        let limit = try CustomizationRoutes.integerParameter(request, "limit", in: 1...Self.maxReportPage) ?? 50
        let after = try AppUserRoutes.idParameter(request, "after", allowEmpty: false).map { Identifier($0) }
        var indexes: [SchemaIndex] = []
        if let current = entry.schema {
            indexes.append(current)
            for version in max(minimum, entry.app.schemaVersionFloor + 1)..<current.version {
                if let index = try await services.apps.index(entry, version: version) { indexes.append(index) }
            }
        }
        let supported = SupportedVersions(indexes)
        var checked = 0
        var affected = 0
        var droppedIds = Set<Identifier>()
        // The first `limit + 1` affected users above `after` in byte order, trimmed as it grows (bounded memory).
        var page: [(Identifier, [Identifier])] = []
        func trim() {
            page.sort { $0.0 < $1.0 }
            if page.count > limit + 1 { page.removeLast(page.count - limit - 1) }
        }
        let unreadable = try await services.application.forEachReadableCustomization(Identifier(entry.app.id)) { record, customization in
            checked += 1
            let (pruned, dropped) = supported.prune(customization)
            guard dropped else { return }
            affected += 1
            let gone = customization.referencedIds.subtracting(pruned.referencedIds)
            if droppedIds.count < SchemaRoutes.maxListedIds { droppedIds.formUnion(gone) }
            let user = Identifier(record.userId)
            if after.map({ user > $0 }) ?? true {
                page.append((user, gone.sorted()))
                if page.count > 4 * (limit + 1) { trim() }
            }
        }
        trim()
        let listed = page.prefix(limit)
        let next: JSONValue = page.count > limit ? .string(listed.last!.0.text) : .null
        return .object(JSONObject([
            ("dryRun", true), ("minimumSchemaVersion", .integer(minimum)), ("currentSchemaVersion", .integer(entry.app.schemaVersion)),
            ("customizationsChecked", .integer(checked)), ("customizationsAffected", .integer(affected)),
            ("customizationsUnreadable", .integer(unreadable)),
            ("droppedIds", .array(droppedIds.sorted().prefix(SchemaRoutes.maxListedIds).map { .string($0.text) })),
            ("affectedUsers", .array(listed.map { user, ids in
                            .object(
                                JSONObject([
                                    ("userId", .string(user.text)),
                                    ("droppedIds", .array(ids.prefix(SchemaRoutes.maxListedIds).map { .string($0.text) })),
                                ]))
            })),
            ("affectedUsersNext", next),
        ]))
    }
}
