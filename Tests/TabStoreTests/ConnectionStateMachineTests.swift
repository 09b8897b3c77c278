import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer

/// The connection lifecycle without sockets: each case a connection's events with the action each must
/// produce (vocabulary and runner in ConnectionStateMachineTestSupport.swift). The machine is created at
/// 1 s; timeouts: header 100 ms, body 300 ms, idle 1 s, write 500 ms, linger 200 ms; header limit 256 bytes,
/// body limit 1000. Every case also checks that the body budget balances.
@Suite("ConnectionStateMachine: events in, actions out, clock injected")
struct ConnectionStateMachineTests {
    @Test("requests, responses, limits, timeouts, drain", arguments: requestCases)
    func requests(_ scenario: MachineCase) { scenario.run() }

    @Test("streamed responses", arguments: streamCases)
    func streams(_ scenario: MachineCase) { scenario.run() }

    static let t0 = ms(1000)

    static let requestCases: [MachineCase] = [
        MachineCase("keep-alive: admit, dispatch, respond, written, then the next request", [
            on(.bytes(Wire.get), .admit("/a"), deadline: ms(2000)),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0), deadline: 0),
            on(.respond(200), at: ms(1005), .respond(200), deadline: ms(2005)),
            on(.written, .wait(.read), deadline: ms(2005)),
            on(.bytes(Wire.getB), at: ms(1500), .admit("/b")),
            on(.admitted("r2"), .dispatch("/b", id: "r2", at: ms(1500))),
        ]),
        MachineCase("Connection: close: the response says close, then linger until the client's EOF", [
            on(.bytes(Wire.getClose), .admit("/c")),
            on(.admitted("r1"), .dispatch("/c", id: "r1", at: t0)),
            on(.respond(200), at: ms(1005), .respond(200, keepAlive: false)),
            on(.written, .linger, deadline: ms(1205)),
            on(.eof, .close()),
        ]),
        MachineCase("HTTP/1.0 without keep-alive: answered, then closed", [
            on(.bytes(Wire.get10), .admit("/old")),
            on(.admitted("r1"), .dispatch("/old", id: "r1", at: t0)),
            on(.respond(200), .respond(200, keepAlive: false)),
            on(.written, .linger),
        ]),
        MachineCase("HEAD: the response's head only, the connection stays", [
            on(.bytes(Wire.head), .admit("/h")),
            on(.admitted("r1"), .dispatch("/h", id: "r1", at: t0)),
            on(.respond(200), .respond(200, body: false)),
            on(.written, .wait(.read)),
        ]),
        MachineCase("pipelining: the second request is parsed only once the first response is written", [
            on(.bytes(Wire.get + Wire.getB), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200)),
            on(.partial, .wait([.read, .write])),
            on(.written, at: ms(1010), .admit("/b")),
            on(.admitted("r2"), .dispatch("/b", id: "r2", at: ms(1010))),
        ]),
        MachineCase("pipelining: a request arriving while the previous response is still being written waits for it", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200)),
            on(.partial, .wait([.read, .write])),
            on(.bytes(Wire.getB), .wait([.read, .write])),
            on(.written, at: ms(1010), .admit("/b")),
        ]),
        MachineCase("input while a request is handled waits, a head's worth at most (reading stops), then is parsed", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.bytes(String(repeating: "x", count: 300)), .wait([])),
            on(.respond(200), .respond(200)),
            on(.written, .fail(431)),
            on(.written, .linger),
        ]),
        MachineCase("slowloris: the header timeout runs from the first byte, more bytes do not extend it; at the deadline nothing, just past 408", [
            on(.bytes("GET /a HT"), .wait(.read), deadline: ms(1100)),
            on(.bytes("TP/1.1\r\n"), at: ms(1050), .wait(.read), deadline: ms(1100)),
            on(.tick, at: ms(1100), .wait(.read)),
            on(.tick, at: ms(1100) + 1, .fail(408)),
            on(.written, .linger, deadline: ms(1300) + 1),
            on(.tick, at: ms(1300) + 1, .wait(.read)),
            on(.tick, at: ms(1300) + 2, .close()),
        ]),
        MachineCase("idle keep-alive connection: kept at the idle deadline, closed just past it", [
            on(.tick, at: ms(1999), .wait(.read)),
            on(.tick, at: ms(2000), .wait(.read)),
            on(.tick, at: ms(2000) + 1, .close()),
        ]),
        MachineCase("a body that stops arriving: 408 at the body timeout with the admitted request id, the reservation returned", [
            on(.bytes(Wire.post(5, "ab")), .admit("/p", bodyBytes: 5, whole: false), deadline: ms(1300)),
            on(.admitted("r1"), .wait(.read), deadline: ms(1300)),
            on(.tick, at: ms(1300), .wait(.read)),
            on(.tick, at: ms(1300) + 1, .fail(408, id: "r1", releasing: 5)),
        ]),
        MachineCase("no deadline while the responder works", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0), deadline: 0),
            on(.tick, at: ms(100_000), .wait(.read)),
        ]),
        MachineCase("Expect: 100-continue: admitted first, then 100 Continue, then the body", [
            on(.bytes(Wire.post(2, expect: true)), .admit("/p", bodyBytes: 2, whole: false)),
            on(.admitted("r1"), .sendContinue),
            on(.written, .wait(.read)),
            on(.bytes("hi"), at: ms(1010), .dispatch("/p", body: "hi", id: "r1", at: ms(1010))),
            on(.respond(200), .respond(200, releasing: 2)),
        ]),
        MachineCase("Expect: 100-continue with the body already sent: 100 Continue is still written first", [
            on(.bytes(Wire.post(2, "hi", expect: true)), .admit("/p", bodyBytes: 2, whole: false)),
            on(.admitted("r1"), .sendContinue),
            on(.written, .dispatch("/p", body: "hi", id: "r1", at: t0)),
        ]),
        MachineCase("admission refusal: answered with its request id and closed, no 100 Continue, the body never read", [
            on(.bytes(Wire.post(500, "0123456789", expect: true)), .admit("/p", bodyBytes: 500, whole: false)),
            on(.refused(401, id: "r1"), .respond(401, keepAlive: false, id: "r1")),
            on(.partial, .wait(.write)),
            on(.written, .linger),
            on(.eof, .close()),
        ]),
        MachineCase("a request without a body is admitted whole; a refused HEAD gets no body", [
            on(.bytes(Wire.head), .admit("/h")),
            on(.refused(403, id: "r9"), .respond(403, keepAlive: false, body: false, id: "r9")),
        ]),
        MachineCase("over the body budget: 503 with Retry-After and the request id, then close", [
            on(.bytes(Wire.post(5)), .admit("/p", bodyBytes: 5, whole: false)),
            on(.overBudget(id: "r1"), .fail(503, id: "r1", retryAfter: 1)),
            on(.written, .linger),
        ]),
        MachineCase("a chunked body reserves the body limit, returned with the response", [
            on(.bytes(Wire.chunked + "3\r\nabc\r\n0\r\n\r\n"), .admit("/k", bodyBytes: 1000, whole: false)),
            on(.admitted("r1"), .dispatch("/k", body: "abc", id: "r1", at: t0)),
            on(.respond(200), .respond(200, releasing: 1000)),
        ]),
        MachineCase("a malformed chunk after admission: 400 with the request id, the reservation returned", [
            on(.bytes(Wire.chunked + "2\r\nabXX"), .admit("/k", bodyBytes: 1000, whole: false)),
            on(.admitted("r1"), .fail(400, id: "r1", releasing: 1000)),
        ]),
        MachineCase("a declared body over the limit: 413 from the head, nothing admitted", [
            on(.bytes(Wire.post(5000)), .fail(413)),
        ]),
        MachineCase("a framing error: 400 and close; the request behind it is never parsed", [
            on(.bytes(Wire.badField + Wire.get), .fail(400)),
            on(.written, .linger),
            on(.eof, .close()),
        ]),
        MachineCase("Content-Length and Transfer-Encoding together (smuggling): 400, close after the write", [
            on(.bytes(Wire.smuggle), .fail(400)),
            on(.partial, .wait(.write)),
            on(.written, .linger),
        ]),
        MachineCase("EOF while idle: closed at once", [
            on(.eof, .close()),
        ]),
        MachineCase("EOF in the middle of a head: closed without an answer", [
            on(.bytes("GET /a"), .wait(.read)),
            on(.eof, .close()),
        ]),
        MachineCase("a request and EOF in one read: answered with Connection: close", [
            on(.bytesThenEOF(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200, keepAlive: false)),
            on(.written, .linger),
            on(.eof, .close()),
        ]),
        MachineCase("EOF while the request is handled: reading stops, the response says close", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.eof, .wait([])),
            on(.respond(200), .respond(200, keepAlive: false)),
            on(.written, .linger),
        ]),
        MachineCase("EOF while 100 Continue is being written: closed once written, the reservation returned", [
            on(.bytes(Wire.post(2, expect: true)), .admit("/p", bodyBytes: 2, whole: false)),
            on(.admitted("r1"), .sendContinue),
            on(.partial, .wait([.read, .write])),
            on(.eof, .wait(.write)),
            on(.written, .close(releasing: 2)),
        ]),
        MachineCase("drain: an idle connection closes at once; a late response is dropped", [
            on(.drain, .close()),
            on(.respond(200), .wait([])),
        ]),
        MachineCase("drain: the request in flight finishes, its response says close", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.drain, .wait(.read)),
            on(.respond(200), .respond(200, keepAlive: false)),
            on(.written, .linger),
        ]),
        MachineCase("drain: a request partly received may still arrive and is answered with close", [
            on(.bytes("GET /a HTTP/1.1\r\n"), .wait(.read)),
            on(.drain, .wait(.read)),
            on(.bytes("Host: x\r\n\r\n"), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200, keepAlive: false)),
        ]),
        MachineCase("drain while a keep-alive response is written: closed once it is", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200)),
            on(.partial, .wait([.read, .write])),
            on(.drain, .wait([.read, .write])),
            on(.written, .close()),
        ]),
        MachineCase("a client that stops reading: the write timeout restarts on progress, closes just past it", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), at: ms(1005), .respond(200)),
            on(.partial, .wait([.read, .write]), deadline: ms(1505)),
            on(.partial, at: ms(1400), .wait([.read, .write]), deadline: ms(1900)),
            on(.tick, at: ms(1900), .wait([.read, .write])),
            on(.tick, at: ms(1900) + 1, .close()),
        ]),
        MachineCase("once pending output is written the idle deadline from the response is back", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), at: ms(1005), .respond(200)),
            on(.partial, .wait([.read, .write]), deadline: ms(1505)),
            on(.written, at: ms(1200), .wait(.read), deadline: ms(2005)),
        ]),
        MachineCase("a socket error closes and returns the reservation", [
            on(.bytes(Wire.post(5, "ab")), .admit("/p", bodyBytes: 5, whole: false)),
            on(.admitted("r1"), .wait(.read)),
            on(.failed, .close(releasing: 5)),
        ]),
        MachineCase("force stop closes in the middle of a request", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.forceStop, .close()),
        ]),
    ]

    static let streamCases: [MachineCase] = [
        MachineCase("head, chunks in order (one queued behind a partial write), the last chunk, then the next request", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read), deadline: 0),
            on(.chunk("one"), .sendChunk("one")),
            on(.written, .wait(.read)),
            on(.chunk("two"), .sendChunk("two")),
            on(.partial, .wait([.read, .write])),
            on(.chunk("three"), .sendChunk("three")),
            on(.written, .wait(.read)),
            on(.streamEnd, at: ms(1500), .finishStream(terminator: true)),
            on(.written, .wait(.read), deadline: ms(2500)),
            on(.bytes(Wire.getB), .admit("/b")),
        ]),
        MachineCase("an empty chunk is never written (it would end the chunked body)", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read)),
            on(.chunk(""), .wait(.read)),
        ]),
        MachineCase("a pipelined request waits behind a stream until it ends", [
            on(.bytes(Wire.get + Wire.getB), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read)),
            on(.chunk("x"), .sendChunk("x")),
            on(.written, .wait(.read)),
            on(.streamEnd, .finishStream(terminator: true)),
            on(.written, at: ms(1100), .admit("/b")),
            on(.admitted("r2"), .dispatch("/b", id: "r2", at: ms(1100))),
        ]),
        MachineCase("drain ends a stream: the last chunk, then close; later chunks are dropped", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read)),
            on(.drain, .finishStream(terminator: true)),
            on(.written, .linger),
            on(.chunk("late"), .wait(.read)),
        ]),
        MachineCase("the client's EOF ends a stream", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read)),
            on(.eof, .finishStream(terminator: true)),
            on(.written, .linger),
            on(.eof, .close()),
        ]),
        MachineCase("a stream to an HTTP/1.0 client is delimited by closing", [
            on(.bytes(Wire.get10), .admit("/old")),
            on(.admitted("r1"), .dispatch("/old", id: "r1", at: t0)),
            on(.stream(200), .startStream(200, keepAlive: false, chunked: false)),
            on(.written, .wait(.read)),
            on(.chunk("x"), .sendChunk("x", chunked: false)),
            on(.written, .wait(.read)),
            on(.streamEnd, .finishStream(terminator: false)),
            on(.written, .linger),
        ]),
        MachineCase("a stream to a Connection: close request is chunked and closes after the last chunk", [
            on(.bytes(Wire.getClose), .admit("/c")),
            on(.admitted("r1"), .dispatch("/c", id: "r1", at: t0)),
            on(.stream(200), .startStream(200, keepAlive: false)),
            on(.written, .wait(.read)),
            on(.streamEnd, .finishStream(terminator: true)),
            on(.written, .linger),
        ]),
        MachineCase("a HEAD stream: the head only, then the connection goes on", [
            on(.bytes(Wire.head), .admit("/h")),
            on(.admitted("r1"), .dispatch("/h", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .finishStream(terminator: false)),
            on(.written, .wait(.read)),
        ]),
        MachineCase("a client that does not read a stream: a full backlog closes it", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read)),
            on(.chunk("x"), .sendChunk("x")),
            on(.backlogFull, .close()),
        ]),
        MachineCase("a stream started while draining ends after its head", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.drain, .wait(.read)),
            on(.stream(200), .startStream(200, keepAlive: false)),
            on(.written, .finishStream(terminator: true)),
            on(.written, .linger),
        ]),
        MachineCase("a stream has no idle timeout; a stalled write does time out", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read), deadline: 0),
            on(.tick, at: ms(60_000), .wait(.read)),
            on(.chunk("x"), .sendChunk("x")),
            on(.partial, .wait([.read, .write]), deadline: ms(60_500)),
            on(.tick, at: ms(60_500), .wait([.read, .write])),
            on(.tick, at: ms(60_500) + 1, .close()),
        ]),
        MachineCase("chunks after the stream's end are dropped", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.streamEnd, .finishStream(terminator: true)),
            on(.chunk("x"), .wait([.read, .write])),
            on(.written, .wait(.read)),
        ]),
        MachineCase("input during a stream is held to a head's worth, parsed after the stream", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.written, .wait(.read)),
            on(.bytes(String(repeating: "x", count: 300)), .wait([])),
            on(.streamEnd, .finishStream(terminator: true)),
            on(.written, .fail(431)),
        ]),
        MachineCase("a stream returns the request body's reservation when it starts", [
            on(.bytes(Wire.post(2, "hi")), .admit("/p", bodyBytes: 2, whole: false)),
            on(.admitted("r1"), .dispatch("/p", body: "hi", id: "r1", at: t0)),
            on(.stream(200), .startStream(200, releasing: 2)),
        ]),
        MachineCase("force stop ends a stream at once", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.stream(200), .startStream(200)),
            on(.forceStop, .close()),
        ]),
    ]
}
