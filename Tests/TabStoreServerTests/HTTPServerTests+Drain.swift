import Foundation
import Glibc
import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreSupport
import TabStoreTestSupport

/// Draining: while in-flight requests finish, the listener keeps accepting, and every request on a new
/// connection gets 503 at once (a load balancer sees `/readyz` fail instead of a hang), then the connection closes.
extension HTTPServerTests {
    @Test("while draining, a new connection is accepted and its request answered 503 at once with Retry-After, then closed")
    func drainAnswersNewConnections() async throws {
        // Timeouts far beyond what the test waits for, so only "held up or not" decides, also under the
        // sanitizers on a busy machine.
        let server = try startServer {
            $0.headerTimeout = 60
            $0.bodyTimeout = 120
        }
        let port = server.port
        let busy = try RawClient(port: port)
        // A request partly received keeps the drain going until the test sends the rest (no race with a timer).
        busy.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhel")
        // Its bytes are in (counted in the body budget) before the drain starts, however slow the machine: else
        // the drain could find nothing in flight, end at once and close the listener under the test's feet.
        #expect(await eventually { server.bodyBytesInFlight > 0 })
        let shutdown = Task { await server.shutdown(grace: 40) }
        // Connections accepted before the drain began are not what this is about: wait until it has.
        #expect(await eventually { server.state.isDraining })
        let started = Date()
        try await Task.sleep(for: .milliseconds(100))
        let (late, silent) = try await offPool { () throws -> (TestResponse?, RawClient) in
            // One that sends nothing must not hold the drain up (it is closed when the drain ends).
            let silent = try RawClient(port: port, timeout: 30)
            // Held until the drain ends (the test never sends the busy request's rest meanwhile), it would get no
            // answer at all before its read gives up: an answer in this window is one given at once.
            let client = try RawClient(port: port, timeout: 30)
            let response = client.request(.get("/readyz"))
            #expect(client.isClosedByServer())
            return (response, silent)
        }
        #expect(late?.status == 503)
        #expect(late?.header("Retry-After") == "1")
        #expect(late?.header("Connection") == "close")
        #expect(late?.header("Content-Type") == "application/problem+json")
        #expect(late?.header("X-Request-ID")?.isEmpty == false)
        #expect(late?.text.contains("shutting down") == true)
        // The request in flight before the drain still finishes.
        let finished = try await offPool { () -> TestResponse? in
            busy.send("lo")
            let response = busy.readResponse()
            Glibc.shutdown(busy.fd, Int32(SHUT_WR))  // the client is done (its descriptor stays the RawClient's to close): nothing lingers
            return response
        }
        #expect(finished?.text == "hello")
        await shutdown.value
        #expect(try await offPool { silent.isClosedByServer() }, "the silent late connection is closed when the drain ends")
        // Well before the 40 s grace (and the silent connection's 60 s header timeout): it did not hold the drain up.
        #expect(Date().timeIntervalSince(started) < 38, "a silent connection accepted while draining held the drain up")
        #expect(throws: (any Error).self) { _ = try RawClient(port: port) }
    }

    @Test("while draining, /readyz on a new connection says draining (503, urn:tabstore:problem:draining), so do other routes")
    func drainReadyzSaysDraining() async throws {
        // A grace far beyond what the test waits for: on a loaded machine (CI, sanitizers) a 2 s drain
        // could end before the late connections are made, and they would be refused instead of answered.
        let live = try LiveService {
            $0.shutdownGrace = 60
            $0.bodyTimeout = 120  // the partial request below must outlive a slow machine's pauses
        }
        let port = live.port
        // A request partly received before the drain keeps it going until the test sends the rest; its body's
        // first byte is in (counted in the body budget) before the drain starts, however slow the machine.
        let partial = try RawClient(port: port, timeout: 60)
        partial.send("POST /v1/apps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(live.admin)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{")
        #expect(await eventually { live.service.server.bodyBytesInFlight > 0 })
        let stopping = Task { await live.stop() }
        #expect(await eventually { live.service.server.state.isDraining })
        try await Task.sleep(for: .milliseconds(100))
        let answers = try await offPool { () throws -> [TestResponse?] in
            [TestRequest.get("/readyz"), .get("/v1/apps").bearer(live.admin), .head("/healthz")].map { request in
                (try? RawClient(port: port, timeout: 30))?.request(request)
            }
        }
        for answer in answers { #expect(answer?.status == 503) }
        #expect(answers[0]?.problemType == "urn:tabstore:problem:draining")
        #expect(answers[0]?.header("Retry-After") == "1")
        #expect(answers[0]?.header("Connection") == "close")
        #expect(answers[1]?.problemType == "urn:tabstore:problem:draining", "not handled: \(answers[1]?.text ?? "")")
        // The request in flight before the drain finishes, and with it the drain.
        let finished = try await offPool { () -> TestResponse? in
            partial.send("}")
            let response = partial.readResponse()
            Glibc.shutdown(partial.fd, Int32(SHUT_WR))  // the client is done: nothing lingers
            return response
        }
        // Handled, not refused for the drain: `{}` is no app, so its answer is the route's own problem.
        #expect(finished != nil && finished?.status != 503, "\(finished?.status ?? 0) \(finished?.text ?? "")")
        await stopping.value
        withExtendedLifetime(partial) {}
    }
}
