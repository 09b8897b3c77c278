import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer
import TabStoreTestSupport

// The vocabulary of the state machine's table (ConnectionStateMachineTests): events a test feeds, the
// outcome it expects, and the runner. No sockets, no clock: every step says (or inherits) its time.

/// Milliseconds as the machine's monotonic nanoseconds.
func ms(_ value: UInt64) -> UInt64 { value * 1_000_000 }

extension ConnectionStateMachine.Configuration {
    /// Small limits and round timeouts: header 100 ms, body 300 ms, idle 1 s, write 500 ms, linger 200 ms.
    static let test: ConnectionStateMachine.Configuration = {
        var limits = HTTPLimits()
        limits.maxHeaderBytes = 256
        limits.maxBodyBytes = 1000
        return ConnectionStateMachine.Configuration(limits: limits, headerTimeout: ms(100), bodyTimeout: ms(300), idleTimeout: ms(1000),
                                                    writeTimeout: ms(500), lingerTimeout: ms(200), readChunk: 64)
    }()
}

/// What happened, as the event loop would report it.
enum MachineEvent: Sendable {
    /// Bytes read from the socket (appended), then `inputReceived`.
    case bytes(String)
    /// Bytes, then the client's EOF in the same read.
    case bytesThenEOF(String)
    case eof
    /// The responder admitted the head with this request id; the loop hands the last `admit`'s whole
    /// request back.
    case admitted(String)
    case refused(Int, id: String)
    /// The loop reserved the last `reserve`'s bytes and hands its whole request back.
    case reserved
    /// The last `reserve`'s bytes do not fit the shared budget.
    case overBudget
    case respond(Int)
    case stream(Int)
    case chunk(String)
    case streamEnd
    /// The stream's source ended it and the connection must not serve another request (its authorization ended).
    case streamEndClosing
    case written
    case partial
    case backlogFull
    case tick
    case drain
    case failed
    case forceStop
}

/// An action, reduced to what a test compares.
enum Outcome: Equatable, Sendable {
    case wait(Interest)
    case admit(String, whole: Bool = true)
    case refuseDraining(String)
    /// `whole`: the body is complete (the action carries the request).
    case reserve(Int, whole: Bool = false)
    case dispatch(String, body: String = "", id: String, at: UInt64)
    case sendContinue
    /// `id`: the response's X-Request-ID as the machine sent it (it sets one on refusals only).
    case respond(Int, keepAlive: Bool = true, body: Bool = true, releasing: Int = 0, id: String? = nil)
    case fail(Int, id: String? = nil, retryAfter: Int? = nil, releasing: Int = 0)
    case startStream(Int, keepAlive: Bool = true, chunked: Bool = true, releasing: Int = 0)
    case sendChunk(String, chunked: Bool = true)
    case finishStream(terminator: Bool)
    case linger
    case close(releasing: Int = 0)

    init(_ action: ConnectionStateMachine.Action) {
        switch action {
        case .wait(let interest): self = .wait(interest)
        case .admit(let head, let request): self = .admit(head.target, whole: request != nil)
        case .refuseDraining(let head): self = .refuseDraining(head.target)
        case .reserve(let bytes, let request): self = .reserve(bytes, whole: request != nil)
        case .dispatch(let request, let requestId, let receivedAt):
            self = .dispatch(request.head.target, body: String(decoding: request.body, as: UTF8.self), id: requestId, at: receivedAt)
        case .sendContinue: self = .sendContinue
        case .respond(let response, let keepAlive, let includeBody, let releasing):
            self = .respond(response.status, keepAlive: keepAlive, body: includeBody, releasing: releasing, id: response.headers["X-Request-ID"])
        case .fail(let status, _, let requestId, let retryAfter, let releasing):
            self = .fail(status, id: requestId, retryAfter: retryAfter, releasing: releasing)
        case .startStream(let head, let keepAlive, let chunked, let releasing):
            self = .startStream(head.status, keepAlive: keepAlive, chunked: chunked, releasing: releasing)
        case .sendChunk(let chunk, let chunked): self = .sendChunk(String(decoding: chunk, as: UTF8.self), chunked: chunked)
        case .finishStream(let terminator): self = .finishStream(terminator: terminator)
        case .linger: self = .linger
        case .close(let releasing): self = .close(releasing: releasing)
        }
    }

    /// Body bytes this action hands back to the shared budget.
    var released: Int {
        switch self {
        case .respond(_, _, _, let releasing, _), .fail(_, _, _, let releasing), .startStream(_, _, _, let releasing), .close(let releasing):
            releasing
        default: 0
        }
    }
}

/// One event at a time (nil: the previous step's), the outcome it must produce and, optionally, the
/// deadline the machine must hold afterwards.
struct Step: Sendable {
    let event: MachineEvent
    let at: UInt64?
    let expected: Outcome
    let deadline: UInt64?
}

func on(_ event: MachineEvent, at time: UInt64? = nil, _ expected: Outcome, deadline: UInt64? = nil) -> Step {
    Step(event: event, at: time, expected: expected, deadline: deadline)
}

struct MachineCase: Sendable, CustomTestStringConvertible {
    let name: String
    /// The machine is made for a connection accepted while the server drains.
    let acceptedWhileDraining: Bool
    let steps: [Step]

    init(_ name: String, acceptedWhileDraining: Bool = false, _ steps: [Step]) {
        self.name = name
        self.acceptedWhileDraining = acceptedWhileDraining
        self.steps = steps
    }

    var testDescription: String { name }

    /// Feeds the steps to a machine created at 1 s, checking each outcome (stopping at the first wrong one),
    /// each deadline asked for, and that the body budget balances: what was reserved is released, or still
    /// held by the machine.
    func run() {
        var clock = ms(1000)
        var machine = ConnectionStateMachine(configuration: .test, now: clock, acceptedWhileDraining: acceptedWhileDraining)
        var pending = Pending()
        var reserved = 0
        var released = 0
        for (index, step) in steps.enumerated() {
            if let at = step.at { clock = at }
            if case .reserved = step.event { reserved += pending.bytes }
            let action = machine.apply(step.event, now: clock, pending: pending)
            switch action {
            case .admit(_, let request): pending.admitting = request
            case .reserve(let bytes, let request): (pending.bytes, pending.reserving) = (bytes, request)
            default: break
            }
            let outcome = Outcome(action)
            released += outcome.released
            #expect(outcome == step.expected, "step \(index + 1): \(step.event)")
            // Past the first wrong action the rest of the case means nothing.
            if outcome != step.expected { return }
            if let deadline = step.deadline {
                #expect(machine.deadline == deadline, "step \(index + 1): \(step.event): deadline")
            }
        }
        #expect(reserved - released == machine.reservedBodyBytes, "body budget: reserved \(reserved), released \(released)")
    }
}

/// What the last `admit` and `reserve` carried, for the loop's answers.
struct Pending {
    var admitting: HTTPRequest?
    var bytes = 0
    var reserving: HTTPRequest?
}

extension ConnectionStateMachine {
    mutating func apply(_ event: MachineEvent, now: UInt64, pending: Pending) -> Action {
        switch event {
        case .bytes(let text):
            append(Array(text.utf8)[...])
            return inputReceived(now: now)
        case .bytesThenEOF(let text):
            append(Array(text.utf8)[...])
            return inputEnded(now: now)
        case .eof: return inputEnded(now: now)
        case .admitted(let id): return admitted(requestId: id, request: pending.admitting, now: now)
        case .refused(let status, let id): return refused(HTTPResponse(status: status, body: Array("no".utf8)), requestId: id, now: now)
        case .reserved: return reserved(pending.bytes, request: pending.reserving, now: now)
        case .overBudget: return overBudget(now: now)
        case .respond(let status): return responseReady(HTTPResponse(status: status, body: Array("ok".utf8)), now: now)
        case .stream(let status): return streamStarted(HTTPResponse(status: status), now: now)
        case .chunk(let text): return chunkAvailable(Array(text.utf8), now: now)
        case .streamEnd: return streamEnded(now: now)
        case .streamEndClosing: return streamEnded(now: now, closeConnection: true)
        case .written: return writeCompleted(now: now)
        case .partial: return writePending(now: now, backlogFull: false)
        case .backlogFull: return writePending(now: now, backlogFull: true)
        case .tick: return timerFired(now: now)
        case .drain: return drainStarted(now: now)
        case .failed: return connectionFailed()
        case .forceStop: return forceStop()
        }
    }
}

/// Requests the table sends.
enum Wire {
    static let get = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
    static let getB = "GET /b HTTP/1.1\r\nHost: x\r\n\r\n"
    static let getClose = "GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    static let get10 = "GET /old HTTP/1.0\r\n\r\n"
    static let head = "HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n"
    static func post(_ length: Int, _ body: String = "", expect: Bool = false) -> String {
        "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n" + (expect ? "Expect: 100-continue\r\n" : "") + "\r\n" + body
    }
    static let chunked = "POST /k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    static let badField = "GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n"
    static let smuggle = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
}
