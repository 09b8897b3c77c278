import Glibc
import TabStoreHTTP
import TabStoreSupport

/// The driver's half that performs a connection's actions: the responder, encoding, writes, closes.
extension EventLoop {
    /// Performs the machine's actions, each outcome the next event, until it waits or the connection is closed.
    func perform(_ first: Action, on connection: Connection, now: UInt64) {
        var action = first
        var now = now
        while true {
            switch action {
            case .wait(let interest):
                watch(connection, interest)
                return
            case .admit(let head, let request):
                action = admit(head, request: request, on: connection, now: now)
            case .refuseDraining(let head):
                let requestId = Self.requestId(head, context)
                let response = context.responder.drainingResponse(to: head, context: RequestContext(requestId: requestId, receivedAt: now))
                action = connection.machine.refused(response, requestId: requestId, now: now)
            case .reserve(let bytes, let request):
                // The bytes already arrived: they count against the budget shared by all connections, so
                // many concurrent uploads cannot together hold more memory than configured.
                action = context.reserveBodyBytes(bytes)
                    ? connection.machine.reserved(bytes, request: request, now: now) : connection.machine.overBudget(now: now)
            case .dispatch(let request, let requestId, let receivedAt):
                guard let response = dispatch(request, requestId: requestId, receivedAt: receivedAt, on: connection) else {
                    watch(connection, connection.machine.interest)
                    return
                }
                now = ServerContext.monotonicNow()
                action = answered(connection, response, now: now)
            case .sendContinue:
                connection.output.append("HTTP/1.1 100 Continue\r\n\r\n")
                action = flush(connection, now: now)
            case .respond(let response, let keepAlive, let includeBody, let releasing):
                releaseBody(releasing)
                let date = httpDate()
                connection.output.append { ResponseEncoder.encode(response, keepAlive: keepAlive, includeBody: includeBody, date: date, into: &$0) }
                action = flush(connection, now: now)
            case .fail(let status, let reason, let requestId, let retryAfter, let releasing):
                releaseBody(releasing)
                let response = problem(status: status, reason: reason, requestId: requestId, retryAfter: retryAfter)
                let date = httpDate()
                connection.output.append { ResponseEncoder.encode(response, keepAlive: false, includeBody: true, date: date, into: &$0) }
                action = flush(connection, now: now)
            case .startStream(let head, let keepAlive, let chunked, let releasing):
                releaseBody(releasing)
                attachStream(head.stream, to: connection, now: now)
                let date = httpDate()
                connection.output.append { ResponseEncoder.encodeStreamHead(head, chunked: chunked, keepAlive: keepAlive, date: date, into: &$0) }
                action = flush(connection, now: now)
            case .sendChunk(let chunk, let chunked):
                connection.output.appendChunk(chunk, chunked: chunked)
                action = flush(connection, now: now)
            case .finishStream(let terminator):
                finishStream(connection)
                if terminator { connection.output.append("0\r\n\r\n") }
                action = flush(connection, now: now)
            case .linger:
                // Half-close after the last response and read until the client closes (or a short deadline),
                // so unread request bytes do not turn the close into a reset that destroys the response.
                shutdown(connection.fd, Int32(SHUT_WR))
                watch(connection, connection.machine.interest)
                return
            case .close(let releasing):
                releaseBody(releasing)
                close(connection)
                return
            }
        }
    }

    /// Writes what the socket takes now; the outcome is the machine's next event.
    func flush(_ connection: Connection, now: UInt64) -> Action {
        switch connection.output.flush(to: connection.fd) {
        case .drained: return connection.machine.writeCompleted(now: now)
        case .pending:
            if connection.stream != nil { connection.unsentAtDeadline = connection.unsentBytes }
            return connection.machine.writePending(now: now, backlogFull: connection.output.isFull)
        case .failed: return connection.machine.connectionFailed()
        }
    }

    /// Registers the machine's interest with epoll when it changed (a keep-alive cycle changes nothing).
    private func watch(_ connection: Connection, _ interest: Interest) {
        let mask = EpollSelector.mask(interest)
        guard mask != connection.registeredMask else { return }
        connection.registeredMask = mask
        selector.modify(connection.fd, mask: mask, token: connection.token)
    }

    /// Makes the request's id and asks the responder to admit its head.
    private func admit(_ head: HTTPRequestHead, request: HTTPRequest?, on connection: Connection, now: UInt64) -> Action {
        let requestId = Self.requestId(head, context)
        if let refusal = context.responder.admit(head, context: RequestContext(requestId: requestId, receivedAt: now)) {
            return connection.machine.refused(refusal, requestId: requestId, now: now)
        }
        return connection.machine.admitted(requestId: requestId, request: request, now: now)
    }

    /// The client's sane `X-Request-ID`, else a new one.
    private static func requestId(_ head: HTTPRequestHead, _ context: ServerContext) -> String {
        ServerContext.saneRequestId(head.headers["X-Request-ID"]) ?? context.makeRequestId()
    }

    /// Answers that need no waiting (probes, point reads) are made right here, without a thread hop, and
    /// returned; handlers that may wait (group commit) run on the concurrency pool, never on this thread,
    /// and their response comes back through the inbox (nil here). The connection keeps the handler's task
    /// until then, to cancel it when the client leaves (`clientLeft`).
    private func dispatch(_ request: HTTPRequest, requestId: String, receivedAt: UInt64, on connection: Connection) -> HTTPResponse? {
        let token = connection.token
        let requestContext = RequestContext(requestId: requestId, receivedAt: receivedAt)
        let responder = context.responder
        if var response = responder.respondInline(to: request, context: requestContext) {
            response.headers.set("X-Request-ID", requestId)
            return response
        }
        connection.handler = Task {
            var response = await responder.respond(to: request, context: requestContext)
            response.headers.set("X-Request-ID", requestId)
            self.deliver(Delivery(token: token, response: response))
        }
        return nil
    }

    /// Queues a response made off the loop and wakes the loop only for the first one of its turn: the loop
    /// takes the whole inbox at once (`deliverResponses`), so a group commit that answers 30 writes costs one
    /// eventfd write and one wake-up instead of 30. (Whoever found the inbox empty wakes the loop after
    /// appending; a later appender finds it non-empty until the loop takes both.)
    func deliver(_ delivery: Delivery) {
        let first = inbox.withLock { inbox -> Bool in
            inbox.append(delivery)
            return inbox.count == 1
        }
        if first { wake() }
    }

    /// A response the server makes itself: reported, logged as the access line of a request that never
    /// reached a handler (its method and path are unknown or untrusted), with the request's id.
    private func problem(status: Int, reason: String, requestId: String?, retryAfter: Int?) -> HTTPResponse {
        context.observer?.serverResponded(status: status, reason: reason)
        let requestId = requestId ?? context.makeRequestId()
        context.logger.info("request", [("route", "unparsed"), ("status", .integer(status)), ("reason", .string(reason)),
                                        ("requestId", .string(requestId))])
        var response = ServerProblem.response(status, reason)
        if let retryAfter { response.headers.add("Retry-After", String(retryAfter)) }
        response.headers.set("X-Request-ID", requestId)
        return response
    }

    /// Returns body bytes to the shared budget: their body is no longer held here.
    private func releaseBody(_ bytes: Int) {
        if bytes > 0 { context.releaseBodyBytes(bytes) }
    }
}
