import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// An app's tab schema: registration (with a dry run that reports its impact), the current version and
/// every stored version.
struct SchemaRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("PUT", "/v1/apps/{appId}/schema", access: .operatorOnly, body: .json, putSchema)
        builder.add("GET", "/v1/apps/{appId}/schema", access: .appUsers, body: .empty, getSchema)
        builder.add("GET", "/v1/apps/{appId}/schema/versions/{version}", access: .appUsers, body: .empty, getSchemaVersion)
    }

    func putSchema(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let schema = try TabSchema.parse(try request.jsonBody())
        let entry = try await services.requireApp(context)
        let appId = Identifier(entry.app.id)
        let dryRun = try AppRoutes.dryRunParameter(request)
        // 400 with or without dryRun, as the minimum's dry run does.
        let limit = try CustomizationRoutes.integerParameter(request, "limit", in: 1...AppRoutes.maxReportPage) ?? 50
        let after = try AppUserRoutes.idParameter(request, "after", allowEmpty: false).map { Identifier($0) }
        if dryRun {
            let impact = try await services.application.schemaImpact(schema, entry: entry, page: ImpactPage(after: after, limit: limit))
            return .json(200, Self.impactReport(impact))
        }
        switch try await services.application.registerSchema(schema, entry: entry) {
        case .current(let document):
            return .json(200, document)
        case .registered(let record):
            return .json(201, record.document, headers: HTTPHeaders([("Location", "/v1/apps/\(appId)/schema/versions/\(record.version)")]))
        }
    }

    /// A dry run's answer.
    private static func impactReport(_ impact: SchemaImpact) -> JSONValue {
        .object(JSONObject([
            ("dryRun", true),
            ("identical", .bool(impact.identical)),
            ("currentVersion", impact.currentVersion.map { .integer($0) } ?? .null),
            ("wouldCreateVersion", impact.wouldCreateVersion.map { .integer($0) } ?? .null),
            ("addedIds", .array(impact.addedIds.map { .string($0.text) })),
            ("removedIds", .array(impact.removedIds.map { .string($0.text) })),
            ("customizationsChecked", .integer(impact.customizationsChecked)),
            ("customizationsAffected", .integer(impact.customizationsAffected)),
            ("customizationsUnreadable", .integer(impact.customizationsUnreadable)),
            ("droppedIds", .array(impact.droppedIds.prefix(Self.maxListedIds).map { .string($0.text) })),
            ("dynamicTabsDropped", .integer(impact.dynamicTabsDropped)),
            ("affectedUsers", .array(impact.affectedUsers.map { Self.userImpactJSON($0.userId, $0.impact) })),
            ("affectedUsersNext", impact.affectedUsersNext.map { .string($0.text) } ?? .null),
        ]))
    }

    /// One affected user of a dry run; each list at most `maxListedIds` long.
    static func userImpactJSON(_ userId: Identifier, _ impact: UserImpact) -> JSONValue {
        func ids(_ list: [Identifier]) -> JSONValue { .array(list.prefix(Self.maxListedIds).map { .string($0.text) }) }
        return .object(JSONObject([
            ("userId", .string(userId.text)), ("droppedIds", ids(impact.droppedIds)), ("visibilityReset", ids(impact.visibilityReset)),
            ("ordersChanged", ids(impact.ordersChanged)), ("tabBarOrderChanged", .bool(impact.tabBarOrderChanged)),
            ("dynamicTabsDropped", .integer(impact.dynamicTabsDropped)),
        ]))
    }

    /// Most ids a dry run lists as dropped (the count of affected customizations is always exact).
    static let maxListedIds = 1_000

    /// A schema version's ETag: its number names its content (versions are never rewritten).
    static func schemaTag(_ version: Int) -> EntityTag { EntityTag("v\(version)") }

    func getSchema(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let schema = try entry.requireSchema()
        let headers = Preconditions.validatorHeaders(Self.schemaTag(schema.version), cacheControl: "private, no-cache")
        if let early = try Preconditions.earlyAnswer(to: request, etag: Self.schemaTag(schema.version), headers: headers) { return early }
        guard let record = try await services.store.schemaVersion(appId: entry.app.id, version: schema.version) else {
            throw APIError.notFound(.noSchema, "schema version \(schema.version) is gone")
        }
        return .json(200, record.document, headers: Preconditions.validatorHeaders(Self.schemaTag(record.version), cacheControl: "private, no-cache"))
    }

    func getSchemaVersion(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let text = try context.require("version")
        guard let version = RouteContext.schemaVersionNumber(text),
              let record = try await services.store.schemaVersion(appId: entry.app.id, version: version)
        else { throw APIError.notFound(.schemaVersionNotFound, "app \"\(entry.app.id)\" has no schema version \(ClientText.quoted(text))") }
        let headers = Preconditions.validatorHeaders(Self.schemaTag(record.version), cacheControl: "private, max-age=86400, immutable")
        if let early = try Preconditions.earlyAnswer(to: request, etag: Self.schemaTag(record.version), headers: headers) { return early }
        return .json(200, record.document, headers: headers)
    }
}
