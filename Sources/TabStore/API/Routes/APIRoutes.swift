import TabStoreHTTP

/// One resource's routes: a value holding what its handlers need, registering each route with the access
/// it declares. Registered once, when the router is built; the router then holds the handlers.
protocol RouteGroup: Sendable {
    func register(on builder: inout Router.Builder)
}

/// The API's routes, one group per resource: the composition step that builds the router `APIResponder`
/// is given.
enum APIRoutes {
    static func groups(_ services: APIServices) -> [any RouteGroup] {
        var groups: [any RouteGroup] = [SystemRoutes(services), AppRoutes(services), SchemaRoutes(services), CustomizationRoutes(services),
                                        UserDataRoutes(services), AppUserRoutes(services), OperatorTokenRoutes(services)]
        if services.configuration.console { groups.append(ConsoleRoutes()) }
        return groups
    }

    static func router(_ services: APIServices) -> Router {
        var builder = Router.Builder()
        for group in groups(services) { group.register(on: &builder) }
        return builder.build()
    }
}
