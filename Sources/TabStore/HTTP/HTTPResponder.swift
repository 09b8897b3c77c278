import Synchronization

/// What the server knows about a request beyond its bytes.
package struct RequestContext: Sendable {
    /// The client's `X-Request-ID` when sane, else one the server made; echoed on the response.
    package let requestId: String
    /// When the request was complete, in monotonic nanoseconds (for durations); for `admit`, when its head was.
    package let receivedAt: UInt64

    package init(requestId: String, receivedAt: UInt64) {
        self.requestId = requestId
        self.receivedAt = receivedAt
    }
}

/// Turns a request into a response. The server calls it off the event loop, so it may wait.
package protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse

    /// An answer made on the event loop without waiting, or nil to go through `respond`. Only for work
    /// that never blocks: in-memory answers and point reads on the embedded database.
    func respondInline(to request: HTTPRequest, context: RequestContext) -> HTTPResponse?

    /// Decides from the request head alone, before any body byte is read, whether the request may go on:
    /// a response here (401, 403, 404, 405, 413, ...) is sent at once. When the request announced a body
    /// the connection then closes, its body never read; without one it goes on with the next request.
    func admit(_ head: HTTPRequestHead, context: RequestContext) -> HTTPResponse?

    /// The answer, made on the event loop, to a request on a connection accepted while the server drains:
    /// a 503 the client may retry elsewhere (the server sends it with `Connection: close`). Such a request is
    /// never admitted or handled.
    func drainingResponse(to head: HTTPRequestHead, context: RequestContext) -> HTTPResponse
}

extension HTTPResponder {
    package func respondInline(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? { nil }

    /// Admits every request: the full request decides.
    package func admit(_ head: HTTPRequestHead, context: RequestContext) -> HTTPResponse? { nil }

    /// A problem document: 503 with `Retry-After: 1`.
    package func drainingResponse(to head: HTTPRequestHead, context: RequestContext) -> HTTPResponse {
        var response = ServerProblem.response(503, "the server is shutting down; retry later")
        response.headers.add("Retry-After", "1")
        return response
    }
}

/// Hooks the server reports to (metrics, logs).
package protocol ServerObserver: Sendable {
    /// A response the server produced itself (framing error, limit, timeout, overload).
    func serverResponded(status: Int, reason: String)
    func connectionOpened()
    func connectionClosed()
}

/// Shared run state, read by handlers (`/readyz`) and set by shutdown.
package final class ServerState: Sendable {
    private let drainingFlag = Atomic<Bool>(false)

    package init() {}

    package var isDraining: Bool { drainingFlag.load(ordering: .acquiring) }

    package func startDraining() { drainingFlag.store(true, ordering: .releasing) }
}
