import TabStoreHTTP
/// One client connection. Owned and touched only by its event loop's thread.
final class Connection {
    enum State {
        /// Reading (and parsing) the next request.
        case reading
        /// A handler is working on a request; further input waits in the buffer.
        case processing
        /// The last response is being written; close after it.
        case closing
    }

    let fd: Int32
    let token: UInt64
    var state = State.reading
    var parser: HTTPParser
    var input: [UInt8] = []
    var inputOffset = 0
    var output: [UInt8] = []
    var outputOffset = 0
    /// Monotonic nanoseconds after which the connection times out; 0 for none.
    var deadline: UInt64 = 0
    /// Whether a request has started arriving (bytes of it are buffered) or its body is being read.
    var inRequest = false
    var interest: UInt32 = 0
    /// The client closed its sending side while a request was being handled: close after the response.
    var peerClosed = false
    /// The current request's id, made once from its head so `admit`, the handler, the log and the response agree.
    var requestId: String?
    /// Bytes of the server's body budget held for the current request's body; released exactly once
    /// (response written, refusal, or close) by the loop.
    var reservedBodyBytes = 0

    init(fd: Int32, token: UInt64, limits: HTTPLimits) {
        self.fd = fd
        self.token = token
        self.parser = HTTPParser(limits: limits)
    }

    var hasPendingOutput: Bool { outputOffset < output.count }
    var bufferedInput: Int { input.count - inputOffset }

    /// Forgets a refused request: its partial body in the parser and any buffered input (the connection
    /// closes; lingering reads what still comes into the loop's scratch buffer, never into these).
    func discardRequest() {
        parser = HTTPParser(limits: parser.limits)
        input = []
        inputOffset = 0
    }

    /// Drops consumed input so the buffer never grows with the number of requests served.
    func compactInput() {
        if inputOffset == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 64 * 1024)
            inputOffset = 0
        } else if inputOffset > 16 * 1024 {
            input.removeFirst(inputOffset)
            inputOffset = 0
        }
    }
}
