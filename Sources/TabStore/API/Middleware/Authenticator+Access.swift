import TabStoreHTTP
import TabStoreStore
import TabStoreSupport
/// Access policies: what each `RouteAccess` a route declares admits.
extension Authenticator {
    /// Enforces a route's declared access: authenticates (401), checks the path's ids (400/404), then
    /// checks that the caller may reach what the path names (403).
    /// - Returns: the caller, nil for a route anyone may call.
    /// - Throws: `APIError` 401, 400, 404 or 403.
    @discardableResult
    func authorize(_ access: RouteAccess, _ head: HTTPRequestHead, _ context: RouteContext) async throws -> Principal? {
        guard requiresCredentials(access) else {
            try context.checkPathIds()
            return nil
        }
        let principal = try await authenticate(head, pathApp: context.validAppId)
        try context.checkPathIds()
        try permit(principal, access, context, method: head.method)
        return principal
    }

    /// `authorize` without waiting: true when admitted, false when the caller's app must be loaded first.
    /// - Throws: `APIError` 401, 400, 404 or 403 as `authorize`.
    func authorizeNow(_ access: RouteAccess, _ head: HTTPRequestHead, _ context: RouteContext) throws -> Bool {
        guard requiresCredentials(access) else {
            try context.checkPathIds()
            return true
        }
        guard let principal = try authenticateNow(head, pathApp: context.validAppId) else { return false }
        try context.checkPathIds()
        try permit(principal, access, context, method: head.method)
        // The operator may name any app: one that does not exist is a 404 now, before its body is read.
        // (A user's token was verified with its app's secret, and `permit` matched it to the path.)
        if principal.operatorName != nil, context.parameters["appId"] != nil, try appExistsNow(try context.appId()) == false {
            throw APIError.notFound(.appNotFound, "no app \"\(try context.appId())\"")
        }
        return true
    }

    /// Whether the app exists, from memory or one point read; nil when it would have to wait.
    private func appExistsNow(_ appId: Identifier) throws -> Bool? {
        if apps.cached(appId) != nil { return true }
        guard let reads = pointReads else { return nil }
        do {
            return try reads.appNow(appId.text) != nil
        } catch is ReadersBusy {
            return nil
        }
    }

    private func requiresCredentials(_ access: RouteAccess) -> Bool {
        switch access {
        case .anyone: false
        case .metrics: configuration.metricsRequireAuth
        case .operatorOnly, .appUsers, .pathUser: true
        }
    }

    /// Whether `principal` may call a route with `access` on the path in `context` (ids compared as bytes).
    private func permit(_ principal: Principal, _ access: RouteAccess, _ context: RouteContext, method: String) throws {
        if principal.readOnly, method != "GET", method != "HEAD" {
            throw APIError.forbidden("this operator token has the read scope: it may call GET only; use an admin-scope token to write")
        }
        guard case .user(let appId, let userId, _, _) = principal else { return }  // the operator may call everything
        switch access {
        case .anyone: return
        case .metrics, .operatorOnly: throw APIError.forbidden("this endpoint is for the operator")
        case .appUsers:
            guard appId == (try context.appId()) else { throw APIError.forbidden("the token is for another app") }
        case .pathUser:
            guard appId == (try context.appId()) else { throw APIError.forbidden("the token is for another app") }
            guard userId == (try context.userId()) else { throw APIError.forbidden("the token is for another user") }
        }
    }
}
