import TabStoreHTTP

/// The vocabulary of `ConnectionStateMachine`: its configuration, its phases and the actions it asks for.
extension ConnectionStateMachine {
    /// Limits and timeouts (nanoseconds), shared by every connection of a server.
    final class Configuration: Sendable {
        let limits: HTTPLimits
        /// A request head must be complete this long after its first byte arrived; a connection's first
        /// request, this long after accept (a connection that sends nothing closes then, unanswered).
        let headerTimeout: UInt64
        /// A body must be complete this long after its head.
        let bodyTimeout: UInt64
        /// A keep-alive connection may wait this long for its next request after a response.
        let idleTimeout: UInt64
        /// A client must take pending output within this long after each partial write.
        let writeTimeout: UInt64
        /// After the last response, the client's remaining bytes are read (and dropped) for this long.
        let lingerTimeout: UInt64
        /// How much one read may bring in (the loop's scratch buffer): the input cap allows one more read.
        let readChunk: Int

        init(limits: HTTPLimits, headerTimeout: UInt64, bodyTimeout: UInt64, idleTimeout: UInt64, writeTimeout: UInt64,
             lingerTimeout: UInt64, readChunk: Int) {
            self.limits = limits
            self.headerTimeout = headerTimeout
            self.bodyTimeout = bodyTimeout
            self.idleTimeout = idleTimeout
            self.writeTimeout = writeTimeout
            self.lingerTimeout = lingerTimeout
            self.readChunk = readChunk
        }

        convenience init(_ server: ServerConfiguration, lingerTimeout: UInt64, readChunk: Int) {
            func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }
            self.init(limits: server.limits, headerTimeout: nanoseconds(server.headerTimeout), bodyTimeout: nanoseconds(server.bodyTimeout),
                      idleTimeout: nanoseconds(server.idleTimeout), writeTimeout: nanoseconds(server.writeTimeout),
                      lingerTimeout: lingerTimeout, readChunk: readChunk)
        }
    }

    /// What the response to the request being handled must honour, fixed when it was dispatched.
    struct Exchange: Equatable, Sendable {
        /// The request allows the connection to stay open after the response.
        var keepAlive: Bool
        /// False for HEAD: the response's head only.
        var includeBody: Bool
        /// HTTP/1.1: a stream can be sent in chunks (HTTP/1.0 streams end by closing the connection).
        var chunked: Bool

        init(keepAlive: Bool, includeBody: Bool, chunked: Bool) {
            self.keepAlive = keepAlive
            self.includeBody = includeBody
            self.chunked = chunked
        }

        /// What the response to a request with this head must honour.
        init(_ head: HTTPRequestHead) {
            self.init(keepAlive: head.keepAlive, includeBody: head.method != "HEAD", chunked: head.version == .http11)
        }
    }

    /// The admission the loop was asked for (`admit`) and has not answered yet.
    enum Admission {
        case none
        /// A head whose body follows (Content-Length > 0 or chunked).
        case head(expectsContinue: Bool, includeBody: Bool)
        /// A whole request without a body: a refusal of it needs no body skipped, so the connection may go on.
        case request(Exchange)

        var includeBody: Bool {
            switch self {
            case .none: true
            case .head(_, let includeBody): includeBody
            case .request(let exchange): exchange.includeBody
            }
        }
    }

    enum Phase: Equatable, Sendable {
        /// Reading (and parsing) the next request, or writing the previous keep-alive response.
        case reading
        /// The responder has the request; further input waits in the buffer.
        case processing(Exchange)
        /// A streamed response is being sent; `ending`: it ends once its pending output is written.
        case streaming(Exchange, ending: Bool)
        /// The last response is being written; the connection lingers, then closes.
        case closing
        /// Half-closed after the last response, reading and dropping what the client still sends.
        case lingering
        case closed
    }

    enum Action {
        /// Nothing more to do until the socket is ready for `Interest` (without `.read`: stop reading),
        /// the deadline passes, or the responder answers.
        case wait(Interest)
        /// Ask the responder whether the request may go on, before any body byte is read. Answer with
        /// `admitted` or `refused`. `request` is the whole request when it has no body (hand it back with
        /// `admitted`). Nothing of the shared body budget is reserved for a body before its bytes arrive.
        case admit(HTTPRequestHead, request: HTTPRequest?)
        /// The connection was accepted while the server drains: answer the request with the responder's
        /// draining answer (503), through `refused`, then close. It is never admitted or dispatched.
        case refuseDraining(HTTPRequestHead)
        /// Body bytes arrived: reserve `bytes` more of the shared body budget for them (never more than the
        /// body received so far). Answer with `reserved`, handing back `request` (the whole request, when
        /// these bytes completed it), or `overBudget`.
        case reserve(Int, request: HTTPRequest?)
        /// Hand the request to the responder (inline when it can answer at once, else off the loop); its
        /// answer comes back as `responseReady` or `streamStarted`.
        case dispatch(HTTPRequest, requestId: String, receivedAt: UInt64)
        /// Write `100 Continue`.
        case sendContinue
        /// Return `releasing` bytes to the body budget and write a whole response.
        case respond(HTTPResponse, keepAlive: Bool, includeBody: Bool, releasing: Int)
        /// Return `releasing` bytes and write a problem response the server makes itself (log it, count it;
        /// make a request id when nil), with `Connection: close`: the connection's last response.
        case fail(status: Int, reason: String, requestId: String?, retryAfter: Int?, releasing: Int)
        /// Return `releasing` bytes and write the head of a streamed response (chunked, or until close).
        case startStream(HTTPResponse, keepAlive: Bool, chunked: Bool, releasing: Int)
        /// Write one chunk of the stream (never empty).
        case sendChunk([UInt8], chunked: Bool)
        /// The stream is over: drop its source; write the last chunk when `terminator`.
        case finishStream(terminator: Bool)
        /// Half-close (no more output), then read and drop input until the client closes or the deadline.
        case linger
        /// Close the socket now, returning `releasing` bytes to the body budget.
        case close(releasing: Int)
    }
}
