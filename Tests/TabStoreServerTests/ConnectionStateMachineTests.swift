import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer
import TabStoreTestSupport

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
            on(.bytes(Wire.get), .admit("/a"), deadline: ms(1100)),
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
        MachineCase("a fresh connection that sends nothing: kept at the header deadline from accept, closed just past it, no answer", [
            on(.tick, at: ms(1099), .wait(.read), deadline: ms(1100)),
            on(.tick, at: ms(1100), .wait(.read)),
            on(.tick, at: ms(1100) + 1, .close()),
        ]),
        MachineCase("a fresh connection's first request is timed from accept, not from its first byte", [
            on(.bytes("GET /a HT"), at: ms(1080), .wait(.read), deadline: ms(1100)),
            on(.tick, at: ms(1100) + 1, .fail(408)),
        ]),
        MachineCase("idle keep-alive connection between requests: kept at the idle deadline, closed just past it", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200)),
            on(.written, .wait(.read), deadline: ms(2000)),
            on(.tick, at: ms(1999), .wait(.read)),
            on(.tick, at: ms(2000), .wait(.read)),
            on(.tick, at: ms(2000) + 1, .close()),
        ]),
        MachineCase("between requests the header timeout runs from the next request's first byte", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.respond(200), .respond(200)),
            on(.written, .wait(.read), deadline: ms(2000)),
            on(.bytes("GET /b"), at: ms(1500), .wait(.read), deadline: ms(1600)),
            on(.tick, at: ms(1600) + 1, .fail(408)),
        ]),
        MachineCase("a body that stops arriving: 408 at the body timeout with the admitted request id, the reservation returned", [
            on(.bytes(Wire.post(5, "ab")), .admit("/p", whole: false), deadline: ms(1300)),
            on(.admitted("r1"), .reserve(2), deadline: ms(1300)),
            on(.reserved, .wait(.read), deadline: ms(1300)),
            on(.tick, at: ms(1300), .wait(.read)),
            on(.tick, at: ms(1300) + 1, .fail(408, id: "r1", releasing: 2)),
        ]),
        MachineCase("a declared body reserves nothing until its bytes arrive: a head alone holds no budget", [
            on(.bytes(Wire.post(1000)), .admit("/p", whole: false)),
            on(.admitted("r1"), .wait(.read)),
            on(.tick, at: ms(1300) + 1, .fail(408, id: "r1", releasing: 0)),
        ]),
        MachineCase("the reservation grows by exactly the body bytes each read brings, returned with the response", [
            on(.bytes(Wire.post(10)), .admit("/p", whole: false)),
            on(.admitted("r1"), .wait(.read)),
            on(.bytes("abc"), .reserve(3)),
            on(.reserved, .wait(.read)),
            on(.bytes("defg"), .reserve(4)),
            on(.reserved, .wait(.read)),
            on(.bytes("hij"), at: ms(1020), .reserve(3, whole: true)),
            on(.reserved, .dispatch("/p", body: "abcdefghij", id: "r1", at: ms(1020))),
            on(.respond(200), .respond(200, releasing: 10)),
        ]),
        MachineCase("the pipelined request behind a body is not reserved for it", [
            on(.bytes(Wire.post(2, "hi") + Wire.get), .admit("/p", whole: false)),
            on(.admitted("r1"), .reserve(2, whole: true)),
            on(.reserved, .dispatch("/p", body: "hi", id: "r1", at: t0)),
            on(.respond(200), .respond(200, releasing: 2)),
            on(.written, .admit("/a")),
        ]),
        MachineCase("over the budget in the middle of a body: 503 with Retry-After and the request id, what was reserved returned", [
            on(.bytes(Wire.post(10, "abc")), .admit("/p", whole: false)),
            on(.admitted("r1"), .reserve(3)),
            on(.reserved, .wait(.read)),
            on(.bytes("defg"), .reserve(4)),
            on(.overBudget, .fail(503, id: "r1", retryAfter: 1, releasing: 3)),
            on(.written, .linger),
        ]),
        MachineCase("no deadline while the responder works", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0), deadline: 0),
            on(.tick, at: ms(100_000), .wait(.read)),
        ]),
        MachineCase("Expect: 100-continue: admitted first, then 100 Continue, then the body", [
            on(.bytes(Wire.post(2, expect: true)), .admit("/p", whole: false)),
            on(.admitted("r1"), .sendContinue),
            on(.written, .wait(.read)),
            on(.bytes("hi"), at: ms(1010), .reserve(2, whole: true)),
            on(.reserved, .dispatch("/p", body: "hi", id: "r1", at: ms(1010))),
            on(.respond(200), .respond(200, releasing: 2)),
        ]),
        MachineCase("Expect: 100-continue with the body already sent: 100 Continue is still written first", [
            on(.bytes(Wire.post(2, "hi", expect: true)), .admit("/p", whole: false)),
            on(.admitted("r1"), .sendContinue),
            on(.written, .reserve(2, whole: true)),
            on(.reserved, .dispatch("/p", body: "hi", id: "r1", at: t0)),
        ]),
        MachineCase("admission refusal: answered with its request id and closed, no 100 Continue, the body never read", [
            on(.bytes(Wire.post(500, "0123456789", expect: true)), .admit("/p", whole: false)),
            on(.refused(401, id: "r1"), .respond(401, keepAlive: false, id: "r1")),
            on(.partial, .wait(.write)),
            on(.written, .linger),
            on(.eof, .close()),
        ]),
        MachineCase("a request without a body is admitted whole; a refused HEAD gets no body and the connection stays", [
            on(.bytes(Wire.head), .admit("/h")),
            on(.refused(403, id: "r9"), at: ms(1010), .respond(403, body: false, id: "r9"), deadline: ms(2010)),
            on(.written, .wait(.read), deadline: ms(2010)),
        ]),
        MachineCase("a refusal of a request without a body keeps the connection: the pipelined requests behind it go on", [
            on(.bytes(Wire.get + Wire.post(0) + Wire.getB), .admit("/a")),
            on(.refused(401, id: "r1"), .respond(401, id: "r1")),
            on(.partial, .wait([.read, .write])),
            on(.written, .admit("/p")),
            on(.refused(415, id: "r2"), .respond(415, id: "r2")),
            on(.written, .admit("/b")),
            on(.admitted("r3"), .dispatch("/b", id: "r3", at: t0)),
            on(.respond(200), .respond(200)),
        ]),
        MachineCase("a refusal without a body still closes when the request says Connection: close", [
            on(.bytes(Wire.getClose), .admit("/c")),
            on(.refused(401, id: "r1"), .respond(401, keepAlive: false, id: "r1")),
            on(.written, .linger),
        ]),
        MachineCase("a refusal without a body after the client's EOF closes", [
            on(.bytesThenEOF(Wire.get), .admit("/a")),
            on(.refused(404, id: "r1"), .respond(404, keepAlive: false, id: "r1")),
            on(.written, .linger),
        ]),
        MachineCase("a refused chunked request closes, even one whose body is empty: a body would have to be skipped", [
            on(.bytes(Wire.chunked + "0\r\n\r\n" + Wire.get), .admit("/k", whole: false)),
            on(.refused(401, id: "r1"), .respond(401, keepAlive: false, id: "r1")),
            on(.written, .linger),
        ]),
        MachineCase("over the body budget with the first bytes: 503 with Retry-After and the request id, then close", [
            on(.bytes(Wire.post(5, "abc")), .admit("/p", whole: false)),
            on(.admitted("r1"), .reserve(3)),
            on(.overBudget, .fail(503, id: "r1", retryAfter: 1)),
            on(.written, .linger),
        ]),
        MachineCase("a chunked body reserves its decoded bytes as they arrive, returned with the response", [
            on(.bytes(Wire.chunked), .admit("/k", whole: false)),
            on(.admitted("r1"), .wait(.read)),
            on(.bytes("3\r\nabc\r\n"), .reserve(3)),
            on(.reserved, .wait(.read)),
            on(.bytes("2\r\nde\r\n0\r\n\r\n"), .reserve(2, whole: true)),
            on(.reserved, .dispatch("/k", body: "abcde", id: "r1", at: t0)),
            on(.respond(200), .respond(200, releasing: 5)),
        ]),
        MachineCase("a malformed chunk after admission: 400 with the request id, the reservation returned", [
            on(.bytes(Wire.chunked + "1\r\na\r\n"), .admit("/k", whole: false)),
            on(.admitted("r1"), .reserve(1)),
            on(.reserved, .wait(.read)),
            on(.bytes("2\r\nbcXX"), .fail(400, id: "r1", releasing: 1)),
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
        MachineCase("EOF while 100 Continue is being written: closed once written, nothing was reserved", [
            on(.bytes(Wire.post(2, expect: true)), .admit("/p", whole: false)),
            on(.admitted("r1"), .sendContinue),
            on(.partial, .wait([.read, .write])),
            on(.eof, .wait(.write)),
            on(.written, .close()),
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
            on(.bytes(Wire.post(5, "ab")), .admit("/p", whole: false)),
            on(.admitted("r1"), .reserve(2)),
            on(.reserved, .wait(.read)),
            on(.failed, .close(releasing: 2)),
        ]),
        MachineCase("force stop closes in the middle of a request", [
            on(.bytes(Wire.get), .admit("/a")),
            on(.admitted("r1"), .dispatch("/a", id: "r1", at: t0)),
            on(.forceStop, .close()),
        ]),
    ]
}
