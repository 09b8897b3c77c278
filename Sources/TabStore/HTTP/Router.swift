import TabStoreSupport
/// Path parameters and what the server knows of one request, for handlers.
package struct RouteContext: Sendable {
    package let parameters: [String: String]
    package let requestId: String
    /// The route's pattern (`/v1/apps/{appId}`), for logs and metrics: never the raw path.
    package let pattern: String
    /// When the caller's credentials stop being valid (seconds since 1970), set once they were checked; nil for
    /// credentials that do not expire (the operator's token) and routes anyone may call. A response that
    /// outlives its request (a stream) ends then.
    package var credentialsExpireAt: Int?
    /// The key that verified the caller's credentials (an app's signing secret), set once they were checked;
    /// nil for credentials no key signed (the operator's token) and routes anyone may call. A response that
    /// outlives its request ends when that key is replaced.
    package var credentialsKey: String?
    /// The operator token's name when an operator calls ("bootstrap" for the configured token); nil for a user
    /// and for routes anyone may call. Histories and the audit log name the actor by it.
    package var operatorName: String?
    /// The named operator token's name (never the configured token's): a response that outlives its request
    /// ends when the token is revoked.
    package var revocableOperatorName: String?

    package init(parameters: [String: String], requestId: String, pattern: String) {
        self.parameters = parameters
        self.requestId = requestId
        self.pattern = pattern
    }

    /// A path parameter the route's pattern declares.
    /// - Throws: `MissingRouteParameter` when the pattern has no such name: a mistyped name is our bug,
    ///   answered as a 500 and logged, never read as an empty id.
    package func require(_ name: String) throws -> String {
        guard let value = parameters[name] else { throw MissingRouteParameter(name: name, pattern: pattern) }
        return value
    }
}

/// A handler asked for a path parameter its route's pattern does not declare (our bug).
package struct MissingRouteParameter: Error, Sendable, CustomStringConvertible {
    package let name: String
    package let pattern: String
    package var description: String { "route \(pattern) has no parameter {\(name)}" }
}

/// Who may call a route. Every route declares one (the builder requires it), and the API enforces it from the
/// request head, before the body is read and before the handler runs, so no handler can forget a check.
package enum RouteAccess: Sendable, Equatable, CaseIterable {
    /// No credentials needed (probes, the API description).
    case anyone
    /// `/metrics`: anyone, or only the operator when configured so.
    case metrics
    /// Only the operator's token.
    case operatorOnly
    /// The operator, or any user of the app the path names (`{appId}`).
    case appUsers
    /// The operator, or exactly the user the path names (`{appId}` and `{userId}`).
    case pathUser
}

/// What a route takes as request content. Every route declares it (the builder requires it), and the API
/// enforces it from the request head, before a body byte is read.
package enum RouteBody: Sendable, Equatable, CaseIterable {
    /// No content: a request announcing one (`Content-Length` over 0, or chunked) is refused (413).
    case empty
    /// A JSON document: a request whose `Content-Type` is not `application/json` is refused (415).
    case json
}

/// Method + path pattern → handler. Built once, then immutable.
package struct Router: Sendable {
    package typealias Handler = @Sendable (HTTPRequest, RouteContext) async throws -> HTTPResponse
    /// Answers without waiting, or returns nil when it would have to wait (then `Handler` runs).
    package typealias InlineHandler = @Sendable (HTTPRequest, RouteContext) throws -> HTTPResponse?

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    package struct Route: Sendable {
        package let method: String
        package let pattern: String
        package let access: RouteAccess
        package let body: RouteBody
        let segments: [Segment]
        package let handler: Handler
        package let inline: InlineHandler?
    }

    package enum Match: Sendable {
        case found(Route, parameters: [String: String])
        /// The path exists for other methods.
        case methodNotAllowed(allowed: [String])
        case notFound
        /// A path segment's percent-encoding is invalid or not UTF-8.
        case badPath
    }

    package let routes: [Route]

    package struct Builder {
        private var routes: [Route] = []

        package init() {}

        package mutating func add(_ method: String, _ pattern: String, access: RouteAccess, body: RouteBody, inline: InlineHandler? = nil,
                                  _ handler: @escaping Handler) {
            var segments: [Segment] = pattern.split(separator: "/").map { part in
                part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
            }
            // A pattern ending in "/" (`/console/`) matches only the path with that slash: its last segment is empty.
            if pattern.count > 1 && pattern.hasSuffix("/") { segments.append(.literal("")) }
            precondition(!routes.contains { $0.method == method && $0.segments == segments }, "duplicate route \(method) \(pattern)")
            routes.append(Route(method: method, pattern: pattern, access: access, body: body, segments: segments, handler: handler, inline: inline))
        }

        package func build() -> Router { Router(routes: routes) }
    }

    /// Matches a raw (percent-encoded) path. Segments are split first and decoded after,
    /// so `%2F` inside an id never creates a new segment. A segment without an escape is compared where it lies
    /// in the path (no copy); only the answering route's parameters become `String`s.
    package func match(method: String, path: Substring) -> Match {
        guard path.hasPrefix("/") else { return .notFound }
        let rawSegments = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var decoded: [Substring] = []
        decoded.reserveCapacity(rawSegments.count)
        for raw in rawSegments {
            let segment = Substring(raw)
            if raw.contains(UInt8(ascii: "%")) {
                guard let unescaped = PercentDecoding.decode(segment) else { return .badPath }
                decoded.append(Substring(unescaped))
            } else {
                decoded.append(segment)
            }
        }
        if decoded.count == 1 && decoded[0].isEmpty { decoded = [] }  // "/"
        var allowed: [String] = []
        for route in routes where route.segments.count == decoded.count {
            let matches = zip(route.segments, decoded).allSatisfy { segment, value in
                switch segment {
                case .literal(let literal): literal.utf8.elementsEqual(value.utf8)  // bytes, not canonical equivalence
                case .parameter: !value.isEmpty
                }
            }
            guard matches else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                // Only the route that answers collects its parameters (the others were compared, not filled).
                var parameters: [String: String] = [:]
                for case (.parameter(let name), let value) in zip(route.segments, decoded) { parameters[name] = String(value) }
                return .found(route, parameters: parameters)
            }
            allowed.append(route.method)
        }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: allowed)
    }
}
