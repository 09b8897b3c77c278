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
        let current = entry.schema
        let dryRun: Bool
        switch request.queryParameter("dryRun") {
        case nil, "false": dryRun = false
        case "true": dryRun = true
        default: throw APIError.badRequest(.invalidParameter, "dryRun must be true or false")
        }
        let identical = current?.schema.isIdentical(to: schema) ?? false
        if dryRun {
            return .json(200, try await impactReport(appId: appId, schema: schema, current: current, identical: identical,
                                                    nextSchemaVersion: entry.app.nextSchemaVersion))
        }
        if identical, let current {
            return .json(200, current.schema.storedDocument(version: current.version, createdAt: try await schemaCreatedAt(appId.text, current.version)))
        }
        let record: SchemaVersionRecord
        do {
            let createdAt = Timestamp.now()
            record = try await services.store.addSchemaVersion(appId: appId.text, expectedCurrent: current?.version ?? 0, makeDocument: { version in
                schema.storedDocument(version: version, createdAt: createdAt)
            }, createdAt: createdAt)
        } catch StoreConflict.revisionMismatch {
            services.apps.invalidate(appId)
            // Another registration won: when it registered this very schema (the same PUT sent twice at once),
            // this one is answered as a repeat is, 200 with that version; another schema is a conflict.
            if let now = try await services.apps.entry(appId)?.schema, now.schema.isIdentical(to: schema) {
                return .json(200, now.schema.storedDocument(version: now.version, createdAt: try await schemaCreatedAt(appId.text, now.version)))
            }
            throw APIError(status: 409, slug: .concurrentRegistration, title: "Conflict",
                           detail: "another schema version was registered meanwhile; read it and retry")
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        }
        services.apps.invalidate(appId)
        services.application.republish(appId: appId)
        return .json(201, record.document, headers: HTTPHeaders([("Location", "/v1/apps/\(appId)/schema/versions/\(record.version)")]))
    }

    private func schemaCreatedAt(_ appId: String, _ version: Int) async throws -> String {
        try await services.store.schemaVersion(appId: appId, version: version)?.createdAt ?? ""
    }

    /// What registering `schema` would do, without storing anything.
    private func impactReport(appId: Identifier, schema: TabSchema, current: SchemaIndex?, identical: Bool,
                              nextSchemaVersion: Int) async throws -> JSONValue {
        let nextVersion = nextSchemaVersion
        let newIndex = SchemaIndex(schema: schema, version: nextVersion)
        var impact = Reconciler.Impact()
        var unreadable = 0
        if !identical {
            // What is served now (under the current version) against what would be served under the new one: choices
            // the stored document keeps for other versions are not this registration's doing.
            unreadable = try await services.application.forEachReadableCustomization(appId) { record, customization in
                let served = current.map { record.servedAsStoredUnder == $0.version ? customization : Reconciler.reconcile(customization, with: $0) }
                impact.add(served ?? customization, newIndex: newIndex)
            }
        }
        let oldIds = Set(current?.allTabs.map(\.tab.id) ?? []).union(current?.schema.items.map(\.id) ?? [])
        let newIds = Set(newIndex.allTabs.map(\.tab.id)).union(schema.items.map(\.id))
        return .object(JSONObject([
            ("dryRun", true),
            ("identical", .bool(identical)),
            ("currentVersion", current.map { .integer($0.version) } ?? .null),
            ("wouldCreateVersion", identical ? .null : .integer(nextVersion)),
            ("addedIds", .array(newIds.subtracting(oldIds).sorted().map { .string($0.text) })),
            ("removedIds", .array(oldIds.subtracting(newIds).sorted().map { .string($0.text) })),
            ("customizationsChecked", .integer(impact.customizationsChecked)),
            ("customizationsAffected", .integer(impact.customizationsAffected)),
            ("customizationsUnreadable", .integer(unreadable)),
            ("droppedIds", .array(impact.droppedIds.sorted().prefix(Self.maxListedIds).map { .string($0.text) })),
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
