import TabStoreDomain
import TabStoreHTTP
import TabStoreStorage
import TabStoreSupport
extension APIResponder {
    /// The schema as served and stored: `version`, `createdAt`, then the items with defaults written out.
    package static func schemaDocument(_ schema: TabSchema, version: Int, createdAt: String) -> [UInt8] {
        guard case .object(let items) = schema.json() else { preconditionFailure("a schema encodes as an object") }
        var object = JSONObject([("version", .integer(version)), ("createdAt", .string(createdAt))])
        for (key, value) in items.members { object[key] = value }
        return JSONWriter.bytes(.object(object))
    }

    func putSchema(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let schema = try TabSchema.parse(try jsonBody(request))
        let entry = try await requireApp(context)
        let appId = Identifier(entry.app.id)
        let current = entry.schema
        let dryRun: Bool
        switch request.queryParameter("dryRun") {
        case nil, "false": dryRun = false
        case "true": dryRun = true
        default: throw APIError.badRequest(.invalidParameter, "dryRun must be true or false")
        }
        let identical = current?.schema == schema
        if dryRun {
            return json(200, try await impactReport(appId: appId, schema: schema, current: current, identical: identical,
                                                    nextSchemaVersion: entry.app.nextSchemaVersion))
        }
        if identical, let current {
            return json(200, Self.schemaDocument(current.schema, version: current.version, createdAt: try await schemaCreatedAt(appId.text, current.version)))
        }
        let record: SchemaVersionRecord
        do {
            let createdAt = Timestamp.now()
            record = try await store.addSchemaVersion(appId: appId.text, expectedCurrent: current?.version ?? 0, makeDocument: { version in
                Self.schemaDocument(schema, version: version, createdAt: createdAt)
            }, createdAt: createdAt)
        } catch StoreConflict.revisionMismatch {
            apps.invalidate(appId)
            throw APIError(status: 409, slug: .concurrentRegistration, title: "Conflict",
                           detail: "another schema version was registered meanwhile; read it and retry")
        } catch StoreConflict.notFound {
            throw APIError.notFound(.appNotFound, "no app \"\(appId)\"")
        }
        apps.invalidate(appId)
        return json(201, record.document, headers: HTTPHeaders([("Location", "/v1/apps/\(appId)/schema/versions/\(record.version)")]))
    }

    private func schemaCreatedAt(_ appId: String, _ version: Int) async throws -> String {
        try await store.schemaVersion(appId: appId, version: version)?.createdAt ?? ""
    }

    /// What registering `schema` would do, without storing anything.
    private func impactReport(appId: Identifier, schema: TabSchema, current: SchemaIndex?, identical: Bool,
                              nextSchemaVersion: Int) async throws -> JSONValue {
        let nextVersion = nextSchemaVersion
        let newIndex = SchemaIndex(schema: schema, version: nextVersion)
        var impact = Reconciler.Impact()
        var unreadable = 0
        if !identical {
            unreadable = try await forEachReadableCustomization(appId) { _, customization in
                impact.add(customization, newIndex: newIndex)
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
        ]))
    }

    /// Most ids a dry run lists as dropped (the count of affected customizations is always exact).
    static let maxListedIds = 1_000

    /// Calls `body` with every stored customization of an app that decodes; one that does not (damaged, or
    /// written by a future version) is skipped, counted and logged (never its content), so one bad row never
    /// fails a whole-app operation.
    /// - Returns: how many rows were skipped.
    func forEachReadableCustomization(_ appId: Identifier, _ body: (CustomizationRecord, Customization) throws -> Void) async throws -> Int {
        var unreadable = 0
        try await store.forEachCustomization(appId: appId.text) { record in
            let customization: Customization
            do {
                customization = try Customization.decodeStored(record.document)
            } catch {
                unreadable += 1
                if unreadable <= 10 {
                    logger.warning("stored_customization_unreadable", [("appId", .string(appId.text)), ("revision", .integer(record.revision)),
                                                                       ("bytes", .integer(record.document.count))])
                }
                return
            }
            try body(record, customization)
        }
        return unreadable
    }

    /// A schema version's ETag: its number names its content (versions are never rewritten).
    static func schemaTag(_ version: Int) -> EntityTag { EntityTag("v\(version)") }

    func getSchema(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let schema = try requireSchema(entry)
        let headers = Self.validatorHeaders(Self.schemaTag(schema.version), cacheControl: "private, no-cache")
        if let early = try conditionalGET(request, etag: Self.schemaTag(schema.version), headers: headers) { return early }
        guard let record = try await store.schemaVersion(appId: entry.app.id, version: schema.version) else {
            throw APIError.notFound(.noSchema, "schema version \(schema.version) is gone")
        }
        return json(200, record.document, headers: Self.validatorHeaders(Self.schemaTag(record.version), cacheControl: "private, no-cache"))
    }

    func getSchemaVersion(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let text = try context.require("version")
        guard let version = Self.schemaVersionNumber(text),
              let record = try await store.schemaVersion(appId: entry.app.id, version: version)
        else { throw APIError.notFound(.schemaVersionNotFound, "app \"\(entry.app.id)\" has no schema version \(ClientText.quoted(text))") }
        let headers = Self.validatorHeaders(Self.schemaTag(record.version), cacheControl: "private, max-age=86400, immutable")
        if let early = try conditionalGET(request, etag: Self.schemaTag(record.version), headers: headers) { return early }
        return json(200, record.document, headers: headers)
    }

    func stats(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await requireApp(context)
        let schema = entry.schema
        var users = 0
        var stored = 0
        var hidden: [Identifier: PerPlacement<Int>] = [:]
        for info in schema?.allTabs ?? [] { hidden[info.tab.id] = PerPlacement(sidebar: 0, tabBar: 0) }
        let unreadable = try await forEachReadableCustomization(Identifier(entry.app.id)) { record, decoded in
            stored += 1
            var customization = decoded
            if let schema, record.schemaVersion != schema.version { customization = Reconciler.reconcile(customization, with: schema) }
            if customization.tabs.isEmpty && customization.sections.isEmpty && customization.tabBarOrder == nil { return }
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
        return json(200, .object(JSONObject([
            ("appId", .string(entry.app.id)), ("schemaVersion", .integer(schema?.version ?? 0)),
            ("usersWithCustomization", .integer(users)), ("storedCustomizations", .integer(stored + unreadable)),
            ("unreadableCustomizations", .integer(unreadable)), ("tabs", .object(tabs)),
        ])))
    }
}
