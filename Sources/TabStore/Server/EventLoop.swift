import CSystem
import Dispatch
import Foundation
import Glibc
import TabStoreHTTP
import TabStoreSupport

/// One epoll event loop on its own thread: accepts, reads, parses, hands complete requests to the
/// responder (off the loop), and writes responses back in order.
///
/// `@unchecked Sendable`: every stored `var` is touched only by the loop's own thread; other threads
/// reach the loop only through `inbox` (behind a Mutex) and a write to the eventfd.
final class EventLoop: @unchecked Sendable {
    private struct Delivery {
        let token: UInt64
        let response: HTTPResponse
        let keepAlive: Bool
        let includeBody: Bool
    }

    private static let listenerToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1
    private static let lingerSeconds = 2.0

    private let context: ServerContext
    private let listener: ListeningSocket
    private let epfd: Int32
    private let wakeFd: Int32
    private let inbox = Locked<[Delivery]>([])
    /// Sockets handed over by `adopt`, registered by the loop's own thread on its next wake-up.
    private let adoptions = Locked<[Int32]>([])
    let finished = DispatchSemaphore(value: 0)

    private var connections: [UInt64: Connection] = [:]
    private var lingering: Set<UInt64> = []
    private var nextToken: UInt64 = 2
    /// Whether the loop still accepts (false once draining).
    private var listening = true
    /// Whether the listener is registered with this loop's epoll (not during an accept backoff).
    private var listenerArmed = false
    private var lastSweep: UInt64 = 0
    private var dateSecond: time_t = 0
    private var dateText = ""
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    init(context: ServerContext, listener: ListeningSocket) throws(SystemError) {
        self.context = context
        self.listener = listener
        epfd = Int32(try Syscall.retrying("epoll_create1") { Int(tabstore_epoll_create()) })
        let wake = tabstore_eventfd()
        guard wake >= 0 else {
            Syscall.close(epfd)
            throw SystemError(call: "eventfd", errno: errno)
        }
        wakeFd = wake
    }

    func start(name: String) {
        let thread = Thread { [self] in self.run() }
        thread.name = name
        thread.start()
    }

    /// Wakes the loop from another thread.
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFd, &one, 8)
    }

    private var limits: HTTPLimits { context.configuration.limits }

    private func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }

    // MARK: - Loop

    private func run() {
        armListener()
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_ADD, wakeFd, TABSTORE_EPOLLIN, Self.wakeToken)
        var events = [UInt32](repeating: 0, count: 256)
        var tokens = [UInt64](repeating: 0, count: 256)
        while true {
            var timeout: Int32 = 200
            if listening, !listenerArmed {
                let now = ServerContext.monotonicNow()
                timeout = context.acceptBackoff.withLock { $0.millisecondsToResume(now: now, cap: timeout) }
                if timeout == 0 {
                    armListener()
                    timeout = 200
                }
            }
            let count = tabstore_epoll_wait(epfd, &events, &tokens, 256, timeout)
            if count < 0 {
                if errno == EINTR { continue }
                context.logger.error("epoll_wait_failed", [("errno", .integer(Int(errno)))])
                break
            }
            for index in 0..<Int(count) {
                switch tokens[index] {
                case Self.listenerToken: acceptConnections()
                case Self.wakeToken: drainWake()
                default: handle(token: tokens[index], events: events[index])
                }
            }
            deliverResponses()
            let now = ServerContext.monotonicNow()
            if now &- lastSweep > nanoseconds(0.2) {
                lastSweep = now
                sweep(now: now)
            }
            if context.state.isDraining {
                if context.forceStop.load(ordering: .acquiring) {
                    for connection in Array(connections.values) { close(connection) }
                }
                drain()
                if connections.isEmpty { break }
            }
        }
        disarmListener()
        Syscall.close(wakeFd)
        Syscall.close(epfd)
        finished.signal()
    }

    private func drainWake() {
        var value: UInt64 = 0
        _ = Glibc.read(wakeFd, &value, 8)
        for fd in adoptions.withLock({ pending -> [Int32] in defer { pending.removeAll() }; return pending }) { register(fd) }
    }

    /// Stops accepting and closes connections that wait for nothing.
    private func drain() {
        if listening {
            listening = false
            disarmListener()
        }
        for connection in Array(connections.values)
        where connection.state == .reading && !connection.inRequest && !connection.hasPendingOutput {
            close(connection)
        }
    }

    // MARK: - Accepting

    /// Watches the listener. EPOLLEXCLUSIVE: one loop is woken per connection, not all (no thundering herd);
    /// such a registration cannot be modified, only deleted and added again.
    private func armListener() {
        guard !listenerArmed else { return }
        listenerArmed = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_ADD, listener.fd, TABSTORE_EPOLLIN | TABSTORE_EPOLLEXCLUSIVE, Self.listenerToken) == 0
    }

    private func disarmListener() {
        guard listenerArmed else { return }
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_DEL, listener.fd, 0, 0)
        listenerArmed = false
    }

    private func acceptConnections() {
        guard listening, listenerArmed else { return }
        for _ in 0..<256 {
            let accepted: Int?
            do {
                accepted = try Syscall.nonBlocking("accept4") { Int(tabstore_accept4(listener.fd)) }
            } catch {
                // Out of descriptors the listener stays readable: back off instead of spinning (see AcceptBackoff).
                let decision = context.acceptBackoff.withLock { $0.failed(errno: error.errno, now: ServerContext.monotonicNow()) }
                if decision.log {
                    context.logger.warning("accept_failed", [("error", .string(error.description)), ("suppressed", .integer(decision.suppressed)),
                                                             ("pauseMs", .integer(decision.pause ? Int(AcceptBackoff.pause / 1_000_000) : 0))])
                }
                if decision.pause {
                    disarmListener()
                    return
                }
                continue
            }
            guard let accepted else { return }
            let fd = Int32(accepted)
            let open = context.openConnections.add(1, ordering: .relaxed).newValue
            if open > context.configuration.maxConnections {
                // Over the cap: a polite, immediate 503 instead of a silent reset.
                context.openConnections.subtract(1, ordering: .relaxed)
                var out: [UInt8] = []
                var response = ServerProblem.response(503, "too many open connections; retry later")
                response.headers.add("Retry-After", "1")
                response.headers.add("X-Request-ID", context.makeRequestId())
                ResponseEncoder.encode(response, keepAlive: false, includeBody: true, date: httpDate(), into: &out)
                _ = out.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                Syscall.close(fd)
                context.observer?.serverResponded(status: 503, reason: "connection limit")
                continue
            }
            Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            register(fd)
        }
    }

    /// Starts serving a connected, non-blocking socket on this loop's thread.
    private func register(_ fd: Int32) {
        let connection = Connection(fd: fd, token: nextToken, limits: limits)
        nextToken += 1
        connections[connection.token] = connection
        connection.deadline = ServerContext.monotonicNow() + nanoseconds(context.configuration.idleTimeout)
        connection.interest = TABSTORE_EPOLLIN | TABSTORE_EPOLLRDHUP
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_ADD, fd, connection.interest, connection.token)
        context.observer?.connectionOpened()
    }

    /// Serves an already connected socket (a socketpair end in tests, an inherited socket): the same
    /// connection loop as accepted ones.
    func adopt(_ fd: Int32) {
        context.openConnections.add(1, ordering: .relaxed)
        adoptions.withLock { $0.append(fd) }
        wake()
    }

    // MARK: - Events

    private func handle(token: UInt64, events: UInt32) {
        guard let connection = connections[token] else { return }
        if lingering.contains(token) {
            discardInput(connection)
            return
        }
        if events & (TABSTORE_EPOLLERR | TABSTORE_EPOLLHUP) != 0, events & TABSTORE_EPOLLIN == 0 {
            close(connection)
            return
        }
        if events & TABSTORE_EPOLLOUT != 0 {
            flush(connection)
            guard connections[token] != nil else { return }
            if connection.state == .reading, !connection.hasPendingOutput, connection.bufferedInput > 0 { process(connection) }
            guard connections[token] != nil else { return }
        }
        if events & (TABSTORE_EPOLLIN | TABSTORE_EPOLLRDHUP) != 0, connection.state != .closing {
            readInput(connection)
        }
    }

    private enum ReadOutcome {
        case data(Int)
        case wouldBlock
        case endOfStream
        case failed
    }

    /// One read(2) into the loop's scratch buffer.
    private func readChunk(_ connection: Connection) -> ReadOutcome {
        do {
            let count = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                try Syscall.nonBlocking("read") { Glibc.read(connection.fd, buffer.baseAddress, buffer.count) }
            }
            guard let count else { return .wouldBlock }
            return count == 0 ? .endOfStream : .data(count)
        } catch {
            return .failed
        }
    }

    private func readInput(_ connection: Connection) {
        var peerClosed = false
        reading: while connection.bufferedInput < inputCap(connection) {
            switch readChunk(connection) {
            case .data(let count):
                connection.input.append(contentsOf: readBuffer[0..<count])
                if count < readBuffer.count { break reading }
            case .wouldBlock:
                break reading
            case .endOfStream:
                peerClosed = true
                break reading
            case .failed:
                close(connection)
                return
            }
        }
        if peerClosed { connection.peerClosed = true }
        if connection.state == .reading { process(connection) }
        guard connections[connection.token] != nil else { return }
        if connection.peerClosed, connection.state == .reading, !connection.hasPendingOutput {
            // The client closed its side with no complete request pending: nothing more can come.
            close(connection)
            return
        }
        updateInterest(connection)
    }

    /// Parses buffered input; hands one complete request at a time to the responder.
    private func process(_ connection: Connection) {
        // One request at a time; the next pipelined one waits until the previous response is fully written.
        while connection.state == .reading, !connection.hasPendingOutput, connections[connection.token] != nil {
            let event: HTTPParser.Event
            do {
                event = try connection.parser.parse(connection.input, offset: &connection.inputOffset)
            } catch {
                fail(connection, status: error.status, reason: error.reason)
                return
            }
            let now = ServerContext.monotonicNow()
            switch event {
            case .needMore:
                connection.compactInput()
                if connection.bufferedInput > 0, !connection.inRequest {
                    // The header timeout runs from a request's first byte: trickling bytes do not extend it.
                    connection.inRequest = true
                    connection.deadline = now + nanoseconds(context.configuration.headerTimeout)
                }
                updateInterest(connection)
                return
            case .head(let head):
                connection.inRequest = true
                connection.deadline = now + nanoseconds(context.configuration.bodyTimeout)
                // Admission before `100 Continue` and before a body byte is read (RFC 9110 §10.1.1 lets a server
                // answer a 100-continue request with a final status instead).
                guard admit(head, on: connection, at: now) else { return }
                // The body's bytes come out of the budget shared by all connections before any is read, so
                // many concurrent uploads cannot together hold more memory than configured.
                let announced = head.chunked ? limits.maxBodyBytes : head.contentLength ?? 0
                guard context.reserveBodyBytes(announced) else {
                    fail(connection, status: 503, reason: "too many request bodies in flight; retry later", retryAfter: 1)
                    return
                }
                connection.reservedBodyBytes = announced
                if head.expectsContinue {
                    connection.output.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
                    flush(connection)
                    guard connections[connection.token] != nil else { return }
                }
            case .request(let request):
                // A request without a body comes whole, with no `.head` first: admit it from its head now.
                if connection.requestId == nil, !admit(request.head, on: connection, at: now) { return }
                let requestId = connection.requestId ?? context.makeRequestId()
                connection.requestId = nil
                connection.inRequest = false
                connection.state = .processing
                connection.deadline = 0
                connection.compactInput()
                dispatch(request, requestId: requestId, on: connection, receivedAt: now)
            }
        }
        if connections[connection.token] != nil { updateInterest(connection) }
    }

    /// Makes the request's id and asks the responder to admit its head. On a refusal, sends it with
    /// `Connection: close` and closes (lingering, as after `fail`) without reading the body; returns false then.
    private func admit(_ head: HTTPRequestHead, on connection: Connection, at now: UInt64) -> Bool {
        let requestId = ServerContext.saneRequestId(head.headers["X-Request-ID"]) ?? context.makeRequestId()
        connection.requestId = requestId
        guard let refusal = context.responder.admit(head, context: RequestContext(requestId: requestId, receivedAt: now)) else { return true }
        answerAndClose(connection, refusal, requestId: requestId, includeBody: head.method != "HEAD")
        return false
    }

    /// Sends `response` as the connection's last answer, its request's unread bytes dropped and its body
    /// reservation returned, then closes (lingering) once it is written.
    private func answerAndClose(_ connection: Connection, _ response: HTTPResponse, requestId: String, includeBody: Bool) {
        var response = response
        response.headers.set("X-Request-ID", requestId)
        connection.discardRequest()
        releaseBody(connection)
        ResponseEncoder.encode(response, keepAlive: false, includeBody: includeBody, date: httpDate(), into: &connection.output)
        connection.state = .closing
        flush(connection)
    }

    private func dispatch(_ request: HTTPRequest, requestId: String, on connection: Connection, receivedAt: UInt64) {
        let requestContext = RequestContext(requestId: requestId, receivedAt: receivedAt)
        let token = connection.token
        let keepAlive = request.head.keepAlive
        let includeBody = request.method != "HEAD"
        let responder = context.responder
        // Answers that need no waiting (probes, point reads) are made right here, without a thread hop.
        if var response = responder.respondInline(to: request, context: requestContext) {
            response.headers.set("X-Request-ID", requestId)
            complete(connection, with: Delivery(token: token, response: response, keepAlive: keepAlive, includeBody: includeBody))
            return
        }
        // Handlers that may wait (group commit) run on the concurrency pool, never on this thread.
        Task {
            var response = await responder.respond(to: request, context: requestContext)
            response.headers.set("X-Request-ID", requestId)
            self.inbox.withLock { $0.append(Delivery(token: token, response: response, keepAlive: keepAlive, includeBody: includeBody)) }
            self.wake()
        }
    }

    private func deliverResponses() {
        let deliveries = inbox.withLock { inbox -> [Delivery] in
            let taken = inbox
            inbox.removeAll(keepingCapacity: true)
            return taken
        }
        for delivery in deliveries {
            guard let connection = connections[delivery.token], connection.state == .processing else { continue }
            complete(connection, with: delivery)
            if connections[delivery.token] != nil, connection.state == .reading, !connection.hasPendingOutput, connection.bufferedInput > 0 {
                process(connection)
            }
        }
    }

    /// Writes a handler's response; the connection then reads its next request, or closes.
    private func complete(_ connection: Connection, with delivery: Delivery) {
        releaseBody(connection)
        let keepAlive = delivery.keepAlive && !context.state.isDraining && !connection.peerClosed
        ResponseEncoder.encode(delivery.response, keepAlive: keepAlive, includeBody: delivery.includeBody, date: httpDate(), into: &connection.output)
        connection.state = keepAlive ? .reading : .closing
        connection.deadline = ServerContext.monotonicNow() + nanoseconds(context.configuration.idleTimeout)
        flush(connection)
    }

    /// Answers a request the server itself refuses, then closes (RFC 9112 §9.6 after a framing error).
    private func fail(_ connection: Connection, status: Int, reason: String, retryAfter: Int? = nil) {
        context.observer?.serverResponded(status: status, reason: reason)
        let requestId = connection.requestId ?? context.makeRequestId()
        connection.requestId = nil
        // The access log line of a request that never reached a handler (its method and path are unknown or untrusted).
        context.logger.info("request", [("route", "unparsed"), ("status", .integer(status)), ("reason", .string(reason)),
                                        ("requestId", .string(requestId))])
        var response = ServerProblem.response(status, reason)
        if let retryAfter { response.headers.add("Retry-After", String(retryAfter)) }
        answerAndClose(connection, response, requestId: requestId, includeBody: true)
    }

    /// Writes what it can; closes (lingering) after the last response once everything is written.
    private func flush(_ connection: Connection) {
        while connection.hasPendingOutput {
            let written: Int?
            do {
                written = try connection.output.withUnsafeBytes { buffer throws(SystemError) in
                    try Syscall.nonBlocking("write") {
                        Glibc.write(connection.fd, buffer.baseAddress! + connection.outputOffset, buffer.count - connection.outputOffset)
                    }
                }
            } catch {
                close(connection)
                return
            }
            guard let written else { break }
            connection.outputOffset += written
        }
        if connection.hasPendingOutput {
            connection.deadline = ServerContext.monotonicNow() + nanoseconds(context.configuration.writeTimeout)
            updateInterest(connection)
            return
        }
        connection.output.removeAll(keepingCapacity: connection.output.capacity <= 64 * 1024)
        connection.outputOffset = 0
        if connection.state == .closing {
            linger(connection)
        } else {
            updateInterest(connection)
        }
    }

    /// Largest amount of unparsed input a connection may buffer before it is parsed: a head, plus the body
    /// bytes its admission reserved from the shared budget, plus one read. Before a head is admitted nothing
    /// of a body is buffered beyond one read; while a request is handled, pipelined input waits in the kernel
    /// once a head's worth is buffered. So memory per connection never exceeds the header limit plus what the
    /// body budget (bounded across all connections) granted it.
    private func inputCap(_ connection: Connection) -> Int {
        switch connection.state {
        case .reading: limits.maxHeaderBytes + connection.reservedBodyBytes + readBuffer.count
        case .processing, .closing: limits.maxHeaderBytes
        }
    }

    /// Keeps reading while a request is being handled (pipelined bytes wait in the buffer, up to the cap),
    /// so a keep-alive request/response cycle needs no epoll_ctl at all.
    private func updateInterest(_ connection: Connection) {
        var wanted: UInt32 = 0
        if connection.state != .closing, !connection.peerClosed, connection.bufferedInput < inputCap(connection) {
            wanted |= TABSTORE_EPOLLIN | TABSTORE_EPOLLRDHUP
        }
        if connection.hasPendingOutput { wanted |= TABSTORE_EPOLLOUT }
        guard wanted != connection.interest else { return }
        connection.interest = wanted
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_MOD, connection.fd, wanted, connection.token)
    }

    /// Half-closes after the last response and reads until the client closes (or a short deadline),
    /// so unread request bytes do not turn the close into a reset that destroys the response.
    private func linger(_ connection: Connection) {
        shutdown(connection.fd, Int32(SHUT_WR))
        lingering.insert(connection.token)
        connection.deadline = ServerContext.monotonicNow() + nanoseconds(Self.lingerSeconds)
        connection.interest = TABSTORE_EPOLLIN | TABSTORE_EPOLLRDHUP
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_MOD, connection.fd, connection.interest, connection.token)
    }

    private func discardInput(_ connection: Connection) {
        while true {
            switch readChunk(connection) {
            case .data: continue
            case .wouldBlock: return  // more may come
            case .endOfStream, .failed:
                close(connection)  // the client closed (or failed): done
                return
            }
        }
    }

    private func sweep(now: UInt64) {
        for connection in Array(connections.values) where connection.deadline != 0 && connection.deadline < now {
            if lingering.contains(connection.token) || connection.state != .reading || connection.hasPendingOutput {
                close(connection)
            } else if connection.inRequest {
                fail(connection, status: 408, reason: "the request was not received in time")
            } else {
                close(connection)  // idle keep-alive connection
            }
        }
    }

    private func close(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.token) != nil else { return }
        releaseBody(connection)
        lingering.remove(connection.token)
        _ = tabstore_epoll_ctl(epfd, TABSTORE_EPOLL_CTL_DEL, connection.fd, 0, 0)
        Syscall.close(connection.fd)
        context.openConnections.subtract(1, ordering: .relaxed)
        context.observer?.connectionClosed()
    }

    /// Returns the connection's body reservation to the shared budget: its body is no longer held here
    /// (handed back in a response, refused, or the connection is gone).
    private func releaseBody(_ connection: Connection) {
        guard connection.reservedBodyBytes > 0 else { return }
        context.releaseBodyBytes(connection.reservedBodyBytes)
        connection.reservedBodyBytes = 0
    }

    private func httpDate() -> String {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            dateText = ResponseEncoder.httpDate(now)
        }
        return dateText
    }
}
