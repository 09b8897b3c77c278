import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer
import TabStoreTestSupport

/// Connections accepted while the server drains (see ConnectionStateMachineTests): each request gets the
/// responder's draining answer from its head (`refuseDraining`, answered with `refused`), then the connection closes.
extension ConnectionStateMachineTests {
    @Test("connections accepted while draining", arguments: lateCases)
    func accepted(_ scenario: MachineCase) { scenario.run() }

    static let lateCases: [MachineCase] = [
        MachineCase("a request is answered from its head, never admitted or dispatched, then the connection closes", acceptedWhileDraining: true, [
            on(.bytes(Wire.get + Wire.getB), .refuseDraining("/a")),
            on(.refused(503, id: "d1"), .respond(503, keepAlive: false, id: "d1")),
            on(.written, .linger),
            on(.eof, .close()),
        ]),
        MachineCase("a body is never read: no 100 Continue, no reservation, closed after the answer", acceptedWhileDraining: true, [
            on(.bytes(Wire.post(500, "0123456789", expect: true)), .refuseDraining("/p")),
            on(.refused(503, id: "d1"), .respond(503, keepAlive: false, id: "d1")),
            on(.written, .linger),
        ]),
        MachineCase("HEAD gets the answer's head only", acceptedWhileDraining: true, [
            on(.bytes(Wire.head), .refuseDraining("/h")),
            on(.refused(503, id: "d1"), .respond(503, keepAlive: false, body: false, id: "d1")),
        ]),
        MachineCase("a head arriving in pieces (or an empty line first) waits for the rest, then is answered", acceptedWhileDraining: true, [
            on(.bytes("\r\n"), .wait(.read)),
            on(.bytes("GET /a HTTP/1.1\r\n"), .wait(.read)),
            on(.bytes("Host: x\r\n\r\n"), .refuseDraining("/a")),
        ]),
        MachineCase(
            "one that sends nothing closes at the header timeout from accept, unanswered; drainStarted changes nothing", acceptedWhileDraining: true,
            [
            on(.drain, .wait(.read)),
            on(.tick, at: ms(1100), .wait(.read)),
            on(.tick, at: ms(1100) + 1, .close()),
        ]),
        MachineCase("a framing error is still answered by the parser's status", acceptedWhileDraining: true, [
            on(.bytes(Wire.badField), .fail(400)),
        ]),
    ]
}
