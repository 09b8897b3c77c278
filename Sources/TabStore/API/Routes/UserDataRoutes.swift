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

    /// Exports are admitted like history pages (`CustomizationRoutes.admitted`).
    func exportInApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        let userId = try context.userId()
        let application = services.application
        return .json(200, try await CustomizationRoutes.admitted(services) { try await application.export(userId, in: entry) })
    }

    func exportEverywhere(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let userId = try context.userId()
        let application = services.application
        return .json(200, try await CustomizationRoutes.admitted(services) { try await application.exportEverywhere(userId) })
    }

    func eraseInApp(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        let entry = try await services.requireApp(context)
        _ = try await services.application.erase(UserKey(appId: Identifier(entry.app.id), userId: try context.userId()), schema: entry.schema)
        return HTTPResponse(status: 204)
    }

    /// Every app holding something of the user (`ApplicationServices.eraseEverywhere`).
    func eraseEverywhere(_ request: HTTPRequest, _ context: RouteContext) async throws -> HTTPResponse {
        try await services.application.eraseEverywhere(try context.userId())
        return HTTPResponse(status: 204)
    }
}
