import Foundation
import TabStoreApplication
import TabStoreDomain
import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// Export and erase of everything stored about a user, in one app or across every app (operator only).
/// An erase keeps only the user's last revision number, so revisions continue above it and no ETag ever
/// names two contents.
struct UserDataRoutes: RouteGroup {
    let services: APIServices

    init(_ services: APIServices) { self.services = services }

    func register(on builder: inout Router.Builder) {
        builder.add("GET", "/v1/apps/{appId}/users/{userId}/export", access: .operatorOnly, body: .empty, exportInApp)
        builder.add("DELETE", "/v1/apps/{appId}/users/{userId}", access: .operatorOnly, body: .empty, eraseInApp)
        builder.add("GET", "/v1/users/{userId}/export", access: .operatorOnly, body: .empty, exportEverywhere)
        builder.add("DELETE", "/v1/users/{userId}", access: .operatorOnly, body: .empty, eraseEverywhere)
    }

    /// Exports read and render like history pages: in one of `HistoryReads`' slots, encoded on a thread of their own.
    func exportInApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let userId = try context.userId()
        let (services, routes) = (self.services, self)
        let body = try await CustomizationRoutes.admitted(services) {
            try await services.historyReads.withSlot { () async throws -> [UInt8] in
                let data = try await services.store.userData(userId: userId.text, appId: entry.app.id, keep: services.configuration.historyRevisions).first
                return await services.historyReads.render { JSONWriter.bytes(routes.export(entry, userId, data)) }
            }
        }
        return .json(200, body)
    }

    func exportEverywhere(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let userId = try context.userId()
        let (services, routes) = (self.services, self)
        let body = try await CustomizationRoutes.admitted(services) {
            try await services.historyReads.withSlot { () async throws -> [UInt8] in
                var found: [(AppCache.Entry, UserData)] = []
                for data in try await services.store.userData(userId: userId.text, appId: nil, keep: services.configuration.historyRevisions) {
                    // An app deleted since the read has nothing left to export.
                    guard let entry = try await services.apps.entry(Identifier(data.appId)) else { continue }
                    found.append((entry, data))
                }
                let apps = found
                return await services.historyReads.render {
                    JSONWriter.bytes(.object(JSONObject([("userId", .string(userId.text)),
                                                         ("apps", .array(apps.map { routes.export($0.0, userId, $0.1) }))])))
                }
            }
        }
        return .json(200, body)
    }

    func eraseInApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        _ = try await services.application.erase(UserKey(appId: Identifier(entry.app.id), userId: try context.userId()), schema: entry.schema)
        return HTTPResponse(status: 204)
    }

    /// One app at a time, each in its own transaction and the user's write turn there: what is stored when
    /// the call starts is gone when it answers (a write that lands in between is erased or comes after).
    func eraseEverywhere(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let userId = try context.userId()
        for appId in try await services.store.appsHoldingUser(userId: userId.text) {
            let entry = try await services.apps.entry(Identifier(appId))
            _ = try await services.application.erase(UserKey(appId: Identifier(appId), userId: userId), schema: entry?.schema)
        }
        return HTTPResponse(status: 204)
    }

    /// `{"appId", "userId", "customization", "history", "idempotencyKeys"}`: the customization as a GET serves
    /// it (revision 0 for none), every kept revision newest first, and the idempotency keys kept (the answers
    /// themselves are copies of revisions).
    func export(_ entry: AppCache.Entry, _ userId: Identifier, _ data: UserData?) -> JSONValue {
        let routes = CustomizationRoutes(services)
        let appId = Identifier(entry.app.id)
        // An answer past the idempotency window no longer counts (a repeat is a new request); the writer removes
        // it in bounded steps, so it may still be stored: it is not listed.
        let notBefore = services.configuration.clock() - services.configuration.idempotencySeconds
        let keys: [JSONValue] = (data?.answers ?? []).filter { $0.createdAt >= notBefore }.map { answer in
            .object(JSONObject([("key", .string(answer.key)), ("status", .integer(answer.status)),
                                ("createdAt", .string(Timestamp.format(Date(timeIntervalSince1970: Double(answer.createdAt)))))]))
        }
        return .object(JSONObject([
            ("appId", .string(appId.text)), ("userId", .string(userId.text)),
            ("customization", customization(data?.customization, appId: appId, userId: userId, schema: entry.schema)),
            ("history", .array((data?.history ?? []).map { routes.historyItem($0) })),
            ("idempotencyKeys", .array(keys)),
        ]))
    }

    /// The customization as a GET serves it; without a schema, as stored (null for none); a damaged one as null (logged).
    private func customization(_ record: CustomizationRecord?, appId: Identifier, userId: Identifier, schema: SchemaIndex?) -> JSONValue {
        do {
            // What is stored: every supported version's choices (docs/domain.md "Several app versions at once"), not one version's view.
            if let record { return try JSONParser.parse(record.document) }
            guard let schema else { return .null }
            return try JSONParser.parse(try CustomizationRoutes.current(nil, appId: appId, userId: userId, schema: schema).document)
        } catch {
            services.logger.warning("stored_customization_unreadable", [("appId", .string(appId.text)), ("revision", .integer(record?.revision ?? 0))])
            return .null
        }
    }
}
