import TabStoreHTTP

/// The life of one HTTP/1.1 connection as a value: events in, one action out per event. No system calls
/// and no clock: every event that needs the time is given `now` (monotonic nanoseconds).
///
/// The event loop reports what the socket and the responder did, performs the action it gets back, and
/// reports that action's outcome as the next event, until the action is `wait`. A keep-alive request:
///
///     inputReceived → admit; admitted → dispatch; responseReady → respond; writeCompleted → wait(.read)
///
/// A request with a body: `admit` from its head, then, as the body's bytes arrive, `reserve` what they
/// add to the shared body budget, until the last `reserved` hands the whole request back to `dispatch`.
/// A refusal (`refused`) keeps the connection when no body follows; a connection accepted while the server
/// drains gets `refuseDraining` for its request instead of `admit`, then closes.
///
/// Every write action (`sendContinue`, `respond`, `fail`, `startStream`, `sendChunk`, `finishStream`) is
/// answered with `writeCompleted` or `writePending` once the loop has tried to write. One request is
/// handled at a time: pipelined bytes wait in the input buffer (up to a head's worth) until the response
/// before them is written, so responses go out in request order.
///
/// A response is whole (`responseReady`) or a stream (`streamStarted`, then `chunkAvailable` each time the
/// loop is woken with more, then `streamEnded`): the connection stays on the loop, counted like any other,
/// until the stream ends, the server drains, the client closes, a client that takes nothing for the write
/// timeout times out, or a stream's output backs up past the write buffer's bound (`writePending` with
/// `backlogFull` closes it: a safety net, since the loop asks a stream for more only once its output is
/// written, see `EventLoop.pollStream`).
struct ConnectionStateMachine {
    // Stored properties widest first, so an idle connection costs no padding (one per connection, kept
    // for as long as it is open).
    let configuration: Configuration
    private var input: RequestInput
    /// When the current phase times out (idle, header, body, linger), in monotonic nanoseconds; 0 for never.
    private var phaseDeadline: UInt64
    /// When a client that stopped taking output times out; set by each partial write.
    private var writeDeadline: UInt64 = 0
    /// The current request's id, from its admission on, so admission, handler, log and response agree.
    private(set) var requestId: String?
    /// Bytes of the server's body budget held for the current request's body: exactly the body bytes
    /// received so far (at most the body limit), reserved as they arrive, never what a head announces.
    /// Handed back exactly once, through the `releasing` of `respond`, `fail`, `startStream` or `close`.
    private(set) var reservedBodyBytes = 0
    private(set) var phase = Phase.reading
    private var admission = Admission.none
    /// A write action was issued and its bytes are not all written yet.
    private(set) var outputPending = false
    /// A request has started arriving (bytes of it are buffered) or its body is being read.
    private(set) var inRequest = false
    /// The client closed its sending side: no further request can come.
    private(set) var peerClosed = false
    /// The server drains: responses say `Connection: close`, idle connections close.
    private(set) var draining = false
    /// Accepted while the server drains: each request gets the draining answer (503) from its head, and the
    /// connection never holds the drain up (the loop closes it when the drain is over).
    private(set) var acceptedWhileDraining = false

    init(configuration: Configuration, now: UInt64, acceptedWhileDraining: Bool = false) {
        self.configuration = configuration
        self.acceptedWhileDraining = acceptedWhileDraining
        draining = acceptedWhileDraining
        input = RequestInput(limits: configuration.limits)
        // A new connection's first request is due within the header timeout from accept: a client that
        // connects and sends nothing is not an idle keep-alive client.
        phaseDeadline = now + configuration.headerTimeout
    }

    // MARK: - State the loop reads

    /// When the connection times out: the write deadline while output is pending after a partial write,
    /// else the phase's; 0 for never. The loop's periodic sweep compares it with the clock (`isExpired`).
    var deadline: UInt64 { outputPending && writeDeadline != 0 ? writeDeadline : phaseDeadline }

    /// Whether `timerFired(now:)` would act: strictly past the deadline.
    func isExpired(at now: UInt64) -> Bool {
        let deadline = self.deadline
        return deadline != 0 && deadline < now
    }

    var bufferedInput: Int { input.buffered }

    /// Whether a readable socket is read into this connection's buffer (lingering input is the loop's to drop).
    var acceptsInput: Bool {
        switch phase {
        case .reading, .processing, .streaming: true
        case .closing, .lingering, .closed: false
        }
    }

    /// Whether one more read is allowed: what is buffered is under the cap.
    var wantsInput: Bool { bufferedInput < inputCap }

    /// Largest amount of unparsed input to buffer: while reading, a head plus one read (body bytes are
    /// parsed out of it after each read, and what the parser then holds is reserved from the shared budget);
    /// otherwise a head's worth, the rest waits in the kernel. So memory per connection never exceeds the
    /// header limit and a read or two, plus the body it was granted from the (bounded, shared) body budget.
    private var inputCap: Int {
        switch phase {
        case .reading: configuration.limits.maxHeaderBytes + configuration.readChunk
        default: configuration.limits.maxHeaderBytes
        }
    }

    /// What to watch the socket for. Reading goes on while a request is handled (pipelined bytes wait in
    /// the buffer, up to the cap), so a keep-alive cycle needs no change of interest.
    var interest: Interest {
        switch phase {
        case .closed: return []
        case .lingering: return .read
        case .closing: return outputPending ? .write : []
        case .reading, .processing, .streaming:
            var wanted: Interest = []
            if !peerClosed, bufferedInput < inputCap { wanted.insert(.read) }
            if outputPending { wanted.insert(.write) }
            return wanted
        }
    }

    // MARK: - Input

    /// Buffers bytes read from the socket; `inputReceived` (or `inputEnded`) follows once the read is over.
    mutating func append(_ bytes: ArraySlice<UInt8>) {
        input.append(bytes)
    }

    /// Bytes were buffered: parse them when reading, else keep them for later.
    mutating func inputReceived(now: UInt64) -> Action {
        guard case .reading = phase else { return .wait(interest) }
        return parseNext(now: now)
    }

    /// The client closed its sending side (read returned 0), after any bytes it sent before were appended.
    mutating func inputEnded(now: UInt64) -> Action {
        peerClosed = true
        switch phase {
        case .reading: return parseNext(now: now)
        case .streaming(let exchange, _): return finishStream(exchange, now: now)
        case .lingering: return closeNow()
        case .processing, .closing, .closed: return .wait(interest)
        }
    }

    /// A read or write failed, or the socket reported an error or a hang-up.
    mutating func connectionFailed() -> Action { closeNow() }

    /// Parses buffered input; one complete request at a time, and only when no response is being written.
    private mutating func parseNext(now: UInt64) -> Action {
        guard case .reading = phase, !outputPending else { return .wait(interest) }
        let event: HTTPParser.Event
        do {
            event = try input.parse()
        } catch {
            return fail(status: error.status, reason: error.reason)
        }
        switch event {
        case .needMore:
            input.compact()
            // An admitted body's bytes count against the shared budget as they arrive.
            if requestId != nil, input.bodyBytesReceived > reservedBodyBytes {
                return .reserve(input.bodyBytesReceived - reservedBodyBytes, request: nil)
            }
            return awaitInput(now: now)
        case .head(let head):
            inRequest = true
            phaseDeadline = now + configuration.bodyTimeout
            // Admission before `100 Continue` and before a body byte is read (RFC 9110 §10.1.1 lets a server
            // answer a 100-continue request with a final status instead).
            admission = .head(expectsContinue: head.expectsContinue, includeBody: head.method != "HEAD")
            return acceptedWhileDraining ? .refuseDraining(head) : .admit(head, request: nil)
        case .request(let request):
            guard let requestId else {
                // A request without a body comes whole, with no head first: admit it from its head now.
                admission = .request(Exchange(request.head))
                return acceptedWhileDraining ? .refuseDraining(request.head) : .admit(request.head, request: request)
            }
            if request.body.count > reservedBodyBytes {
                return .reserve(request.body.count - reservedBodyBytes, request: request)
            }
            return dispatch(request, requestId: requestId, now: now)
        }
    }

    /// No complete request is buffered: wait for more, unless nothing more can come.
    private mutating func awaitInput(now: UInt64) -> Action {
        // The client closed its side with no complete request pending: nothing more can come.
        if peerClosed { return closeNow() }
        if bufferedInput > 0, !inRequest {
            // The header timeout runs from a request's first byte (from accept for a connection's first
            // request, whichever is earlier): trickling bytes do not extend it.
            inRequest = true
            let due = now + configuration.headerTimeout
            phaseDeadline = phaseDeadline == 0 ? due : min(phaseDeadline, due)
        }
        if draining, !inRequest, !acceptedWhileDraining { return closeNow() }
        return .wait(interest)
    }

    private mutating func dispatch(_ request: HTTPRequest, requestId: String, now: UInt64) -> Action {
        self.requestId = nil
        inRequest = false
        phase = .processing(Exchange(request.head))
        phaseDeadline = 0
        input.compact()
        return .dispatch(request, requestId: requestId, receivedAt: now)
    }

    // MARK: - Admission

    /// The responder admitted the head; `request` is the one `admit` carried.
    mutating func admitted(requestId: String, request: HTTPRequest?, now: UInt64) -> Action {
        let pending = admission
        admission = .none
        self.requestId = requestId
        switch pending {
        case .request:
            guard let request else { return fail(status: 500, reason: "admitted request missing") }
            return dispatch(request, requestId: requestId, now: now)
        case .head(let expectsContinue, _):
            if expectsContinue {
                outputPending = true
                return .sendContinue
            }
            return parseNext(now: now)
        case .none:
            return .wait(interest)
        }
    }

    /// The responder refused the head. A request without a body is answered like any other (the connection
    /// goes on with the requests behind it); when a body follows, the answer is the last response and the
    /// body is never read (lingering drops what the client still sends).
    mutating func refused(_ response: HTTPResponse, requestId: String, now: UInt64) -> Action {
        let pending = admission
        admission = .none
        self.requestId = nil
        var response = response
        response.headers.set("X-Request-ID", requestId)
        outputPending = true
        if case .request(let exchange) = pending, exchange.keepAlive, !draining, !peerClosed {
            inRequest = false
            phase = .reading
            phaseDeadline = now + configuration.idleTimeout
            input.compact()
            return .respond(response, keepAlive: true, includeBody: exchange.includeBody, releasing: takeReservation())
        }
        discardRequest()
        phase = .closing
        return .respond(response, keepAlive: false, includeBody: pending.includeBody, releasing: takeReservation())
    }

    /// The loop reserved the `bytes` of the last `reserve`; `request` is the one it carried.
    mutating func reserved(_ bytes: Int, request: HTTPRequest?, now: UInt64) -> Action {
        reservedBodyBytes += bytes
        guard let requestId else { return .wait(interest) }
        if let request { return dispatch(request, requestId: requestId, now: now) }
        return awaitInput(now: now)
    }

    /// The body bytes that arrived do not fit the shared budget now: 503, the connection's last response
    /// (what was reserved before is returned).
    mutating func overBudget(now: UInt64) -> Action {
        fail(status: 503, reason: "too many request bodies in flight; retry later", retryAfter: 1)
    }

    // MARK: - Responses

    /// The responder's whole response to the request being processed.
    mutating func responseReady(_ response: HTTPResponse, now: UInt64) -> Action {
        guard case .processing(let exchange) = phase else { return .wait(interest) }
        let keepAlive = exchange.keepAlive && !draining && !peerClosed
        phase = keepAlive ? .reading : .closing
        phaseDeadline = now + configuration.idleTimeout
        outputPending = true
        return .respond(response, keepAlive: keepAlive, includeBody: exchange.includeBody, releasing: takeReservation())
    }

    /// The responder answers with a stream: `head` now, the body in chunks as they come.
    mutating func streamStarted(_ head: HTTPResponse, now: UInt64) -> Action {
        guard case .processing(let exchange) = phase else { return .wait(interest) }
        let keepAlive = exchange.keepAlive && exchange.chunked && !draining && !peerClosed
        // A stream that cannot go on (draining, client gone, HEAD) ends as soon as its head is written.
        phase = .streaming(exchange, ending: draining || peerClosed || !exchange.includeBody)
        phaseDeadline = 0
        outputPending = true
        return .startStream(head, keepAlive: keepAlive, chunked: exchange.chunked, releasing: takeReservation())
    }

    /// The stream has more bytes (the loop was woken for them). Dropped once the stream is ending or over.
    mutating func chunkAvailable(_ chunk: [UInt8], now: UInt64) -> Action {
        guard case .streaming(let exchange, let ending) = phase, !ending, !chunk.isEmpty else { return .wait(interest) }
        outputPending = true
        return .sendChunk(chunk, chunked: exchange.chunked)
    }

    /// The stream's source has nothing more. `closeConnection`: the connection ends with it (its authorization
    /// ended), so no request behind the stream is served.
    mutating func streamEnded(now: UInt64, closeConnection: Bool = false) -> Action {
        guard case .streaming(let exchange, _) = phase else { return .wait(interest) }
        return finishStream(exchange, now: now, closeConnection: closeConnection)
    }

    private mutating func finishStream(_ exchange: Exchange, now: UInt64, closeConnection: Bool = false) -> Action {
        let keepAlive = exchange.keepAlive && exchange.chunked && !draining && !peerClosed && !closeConnection
        phase = keepAlive ? .reading : .closing
        phaseDeadline = now + configuration.idleTimeout
        outputPending = true
        return .finishStream(terminator: exchange.chunked && exchange.includeBody)
    }

    // MARK: - Output

    /// Everything written: close (lingering) after the last response, else go on with the next request.
    mutating func writeCompleted(now: UInt64) -> Action {
        outputPending = false
        writeDeadline = 0
        switch phase {
        case .closing:
            phase = .lingering
            phaseDeadline = now + configuration.lingerTimeout
            return .linger
        case .reading:
            return parseNext(now: now)
        case .streaming(let exchange, true):
            return finishStream(exchange, now: now)
        case .streaming, .processing, .lingering, .closed:
            return .wait(interest)
        }
    }

    /// Output is left after a write: wait until the socket is writable, for at most the write timeout. A
    /// stream whose output backs up past the write buffer's bound (`backlogFull`) is closed: its client does
    /// not keep up (an SSE client reconnects).
    mutating func writePending(now: UInt64, backlogFull: Bool) -> Action {
        if case .streaming = phase, backlogFull { return closeNow() }
        writeDeadline = now + configuration.writeTimeout
        return .wait(interest)
    }

    // MARK: - Time and shutdown

    /// The loop's periodic sweep: strictly past the deadline, a request that stopped arriving gets 408;
    /// anything else (idle, stalled output, lingering) closes.
    mutating func timerFired(now: UInt64) -> Action {
        guard isExpired(at: now) else { return .wait(interest) }
        if case .reading = phase, !outputPending, inRequest {
            return fail(status: 408, reason: "the request was not received in time")
        }
        return closeNow()
    }

    /// The server drains: idle connections close, a stream ends, in-flight requests finish (their responses
    /// say `Connection: close`).
    mutating func drainStarted(now: UInt64) -> Action {
        draining = true
        switch phase {
        case .reading where !inRequest && !outputPending && !acceptedWhileDraining: return closeNow()
        case .streaming(let exchange, _): return finishStream(exchange, now: now)
        default: return .wait(interest)
        }
    }

    /// The shutdown grace period is over.
    mutating func forceStop() -> Action { closeNow() }

    // MARK: - Helpers

    /// A server-made answer that ends the connection (RFC 9112 §9.6 after a framing error).
    private mutating func fail(status: Int, reason: String, retryAfter: Int? = nil) -> Action {
        let id = requestId
        requestId = nil
        admission = .none
        discardRequest()
        phase = .closing
        outputPending = true
        return .fail(status: status, reason: reason, requestId: id, retryAfter: retryAfter, releasing: takeReservation())
    }

    private mutating func closeNow() -> Action {
        phase = .closed
        outputPending = false
        return .close(releasing: takeReservation())
    }

    private mutating func takeReservation() -> Int {
        defer { reservedBodyBytes = 0 }
        return reservedBodyBytes
    }

    /// Forgets a refused request: its partial body and any buffered input (the connection closes).
    private mutating func discardRequest() {
        input.discard()
        inRequest = false
    }
}
