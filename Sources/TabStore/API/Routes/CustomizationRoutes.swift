import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// A user's customization and the layout resolved from it: reads (answered on the event loop when
/// everything is at hand) and writes (compare-and-set, one user's writes taking turns).
struct CustomizationRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        let user = "/v1/apps/{appId}/users/{userId}"
        builder.add("GET", user + "/customization", access: .pathUser, body: .empty, inline: getCustomizationInline, getCustomization)
        builder.add("PUT", user + "/customization", access: .pathUser, body: .json, putCustomization)
        builder.add("PATCH", user + "/customization", access: .pathUser, body: .json, patchCustomization)
        builder.add("DELETE", user + "/customization", access: .pathUser, body: .empty, deleteCustomization)
        builder.add("GET", user + "/customization/history", access: .pathUser, body: .empty, history)
        builder.add("GET", user + "/customization/events", access: .pathUser, body: .empty, events)
        builder.add("POST", user + "/customization/revert", access: .pathUser, body: .json, revert)
        builder.add("GET", user + "/layout", access: .pathUser, body: .empty, inline: layoutInline, layout)
    }

    /// The ETag of a customization: its revision and the schema version it was reconciled with, which together
    /// determine its content (revisions never repeat for a user; reconciling is a function of both).
    static func customizationTag(revision: Int, schemaVersion: Int) -> EntityTag {
        EntityTag(CustomizationTag.opaque(revision: revision, schemaVersion: schemaVersion))
    }

    /// The ETag of a layout (`CustomizationReads.layoutTag`).
    static func layoutTag(revision: Int, schemaVersion: Int, request: LayoutRequest) -> EntityTag {
        EntityTag(CustomizationReads.layoutTag(revision: revision, schemaVersion: schemaVersion, request: request))
    }

    static let userCacheControl = "private, no-cache"

    func customizationResponse(_ status: Int = 200, document: [UInt8], etag: EntityTag) -> HTTPResponse {
        .json(status, document, headers: Preconditions.validatorHeaders(etag, cacheControl: Self.userCacheControl))
    }

    func userKey(_ context: RouteContext) throws -> UserKey {
        UserKey(appId: try context.appId(), userId: try context.userId())
    }

    // MARK: - Reads

    func getCustomization(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let longPoll = try LongPollRequest(request)
        let entry = try await services.requireApp(context)
        let schema = try await services.servedSchema(request, entry)
        let key = try userKey(context)
        if let longPoll {
            return try await self.longPoll(longPoll, request, context, key, pinned: request.queryParameter("schemaVersion") == nil ? nil : schema)
        }
        // Standbys may answer (TAB_SERVER_DATABASE_READ_URL), never below the revision the client names.
        let record = try await services.application.reads.record(key, atLeast: Self.namedRevision(request))
        return try customizationAnswer(request, key, schema: schema, record: record)!
    }

    /// The highest revision the client's `If-None-Match` names (tags `"R.V"`, `CustomizationTag`): it has seen
    /// it, so no answer may be older. Nil without one (a malformed header is refused later, by the preconditions).
    static func namedRevision(_ request: HTTPRequest) -> Int? {
        guard case .tags(let tags)? = try? EntityTagCondition.parse(request.headers.values("If-None-Match")) else { return nil }
        return tags.compactMap { tag in tag.opaque.split(separator: ".").first.flatMap { Int($0) } }.max()
    }

    /// `getCustomization` from memory and one point read, on the event loop; nil when something would have to
    /// wait (the app is not cached, every reader is busy) or a large stored document would need reconciling.
    func getCustomizationInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        let longPoll = try LongPollRequest(request)
        guard let (key, entry, record) = try inlineRead(context), let schema = try services.servedSchemaNow(request, entry) else { return nil }
        // A long poll whose client has the current revision waits, off the event loop; any other answers now.
        if let longPoll, longPoll.clientHas(revision: record?.revision ?? 0, schemaVersion: schema.version) { return nil }
        // Reconciling a large document would hold the event loop: the pool does that (a 304 or 412 needs no document).
        let reconcileLater =
            record.map { $0.servedAsStoredUnder != schema.version && $0.document.count > services.configuration.inlineDocumentBytes } ?? false
        return try customizationAnswer(request, key, schema: schema, record: record, reconcileLater: reconcileLater)
    }

    /// Reads without waiting, or nil when something is not in memory or no reader is idle.
    /// The route's access policy was enforced before this runs.
    private func inlineRead(_ context: RouteContext) throws -> (UserKey, AppCache.Entry, CustomizationRecord?)? {
        let key = try userKey(context)
        guard let entry = services.apps.cached(key.appId), let read = try services.application.reads.recordNow(key) else { return nil }
        return (key, entry, read.record)
    }

    /// The customization, or 304/412 from its preconditions; nil when `reconcileLater` and a document is needed.
    func customizationAnswer(_ request: HTTPRequest, _ key: UserKey, schema: SchemaIndex, record: CustomizationRecord?,
                                     reconcileLater: Bool = false) throws -> HTTPResponse? {
        let etag = Self.customizationTag(revision: record?.revision ?? 0, schemaVersion: schema.version)
        if let early = try Preconditions.earlyAnswer(to: request, etag: etag, exists: (record?.revision ?? 0) > 0,
                                          headers: Preconditions.validatorHeaders(etag, cacheControl: Self.userCacheControl)) {
            return early
        }
        guard let document = try services.application.reads.customizationDocument(record, key, schema: schema, reconcileLater: reconcileLater) else {
            return nil
        }
        return customizationResponse(document: document, etag: etag)
    }

    func layout(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let layoutRequest = try Self.layoutRequest(request)
        let entry = try await services.requireApp(context)
        let schema = try await services.servedSchema(request, entry)
        let key = try userKey(context)
        let record = try await services.application.reads.record(key)
        return try layoutAnswer(request, key, schema: schema, record: record, layoutRequest: layoutRequest)!
    }

    /// `layout` on the event loop when everything is at hand and the document is small; nil otherwise.
    func layoutInline(_ request: HTTPRequest, _ context: RouteContext) throws -> HTTPResponse? {
        let layoutRequest = try Self.layoutRequest(request)
        guard let (key, entry, record) = try inlineRead(context), let schema = try services.servedSchemaNow(request, entry) else { return nil }
        // Decoding and laying out a large document would hold the event loop: the pool does that (not a 304 or 412).
        let layOutLater = record.map { $0.document.count > services.configuration.inlineDocumentBytes } ?? false
        return try layoutAnswer(request, key, schema: schema, record: record, layoutRequest: layoutRequest, layOutLater: layOutLater)
    }

    /// `sizeClass` (required), `platform` and `style` (optional); a value outside each list is a 400.
    private static func layoutRequest(_ request: HTTPRequest) throws -> LayoutRequest {
        guard let sizeClass = request.queryParameter("sizeClass").flatMap(SizeClass.init(rawValue:)) else {
            throw APIError.badRequest(.invalidParameter, "sizeClass must be compact or regular")
        }
        return LayoutRequest(sizeClass: sizeClass, platform: try optional("platform", Platform.self, request),
                             style: try optional("style", TabViewStyle.self, request))
    }

    private static func optional<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type, _ request: HTTPRequest) throws -> E?
    where E.RawValue == String {
        guard let raw = request.queryParameter(name) else { return nil }
        guard let value = E(rawValue: raw) else {
            throw APIError.badRequest(.invalidParameter, "\(name) must be one of " + E.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    /// The layout, or 304/412 from its preconditions; nil when `layOutLater` and the layout is needed.
    private func layoutAnswer(_ request: HTTPRequest, _ key: UserKey, schema: SchemaIndex, record: CustomizationRecord?,
                              layoutRequest: LayoutRequest, layOutLater: Bool = false) throws -> HTTPResponse? {
        let etag = Self.layoutTag(revision: record?.revision ?? 0, schemaVersion: schema.version, request: layoutRequest)
        if let early = try Preconditions.earlyAnswer(to: request, etag: etag, exists: (record?.revision ?? 0) > 0,
                                          headers: Preconditions.validatorHeaders(etag, cacheControl: Self.userCacheControl)) {
            return early
        }
        // A layout is a function of what its ETag names (revision, schema version, request) and the ids: made
        // once, then served from memory until it ages out.
        guard let document = try services.application.reads.layoutDocument(record, key, schema: schema, request: layoutRequest,
                                                                            layOutLater: layOutLater) else { return nil }
        return customizationResponse(document: document, etag: etag)
    }
}
