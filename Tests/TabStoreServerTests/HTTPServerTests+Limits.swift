import Foundation
import Testing
@testable import TabStoreServer
import TabStoreTestSupport

/// Limits, admission and the body budget of `HTTPServerTests`: what the server refuses, and how early.
extension HTTPServerTests {
    @Test("oversized headers get 431 and the connection closes")
    func oversizedHeaders() async throws {
        let server = try startServer()
        try await offPool {
            let big = try RawClient(port: server.port)
            big.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 5000))\r\n\r\n")
            #expect(big.readResponse()?.status == 431)
            #expect(big.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("a body over the limit gets 413 from its head, before it is read, as a problem document that closes")
    func oversizedBody() async throws {
        let server = try startServer()
        try await offPool {
            let body = try RawClient(port: server.port)
            body.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
            let refused = body.readResponse()
            #expect(refused?.status == 413)
            #expect(refused?.header("Content-Type") == "application/problem+json")
            #expect(refused?.header("Connection") == "close")
            #expect(refused?.header("X-Request-ID")?.isEmpty == false)
        }
        await server.shutdown(grace: 1)
    }

    @Test("Content-Length with Transfer-Encoding gets 400 and the connection closes")
    func contentLengthWithTransferEncoding() async throws {
        let server = try startServer()
        try await offPool {
            let smuggle = try RawClient(port: server.port)
            smuggle.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
            #expect(smuggle.readResponse()?.status == 400)
            #expect(smuggle.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("Expect: 100-continue gets 100 Continue, then the answer to the body")
    func expectContinue() async throws {
        let server = try startServer()
        try await offPool {
            let expect = try RawClient(port: server.port)
            expect.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
            #expect(expect.readResponse()?.status == 100)
            expect.send("hi")
            #expect(expect.readResponse()?.text == "hi")
        }
        await server.shutdown(grace: 1)
    }

    /// A server behind `GateResponder`, whose body limit lets a 1 MB upload through the parser to `admit`.
    func startGatedServer(_ gate: GateResponder) throws -> HTTPServer {
        try startServer(responder: gate) { $0.limits.maxBodyBytes = 2 << 20 }
    }

    @Test("admit refuses from the head: 401 at once, the body never awaited, the connection closed")
    func admissionRefusesAtOnce() async throws {
        let server = try startGatedServer(GateResponder())
        try await offPool {
            // The head of a 1 MB upload and not one body byte: the refusal must not wait for the body.
            let upload = try RawClient(port: server.port, timeout: 30)
            upload.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
            let refused = upload.readResponse()
            #expect(refused?.status == 401)
            #expect(refused?.text == "no credentials")
            #expect(refused?.header("Connection") == "close")
            #expect(refused?.header("X-Request-ID")?.isEmpty == false)
            // At once: the body was never sent, so a server that waited for it would have answered 408, not 401.
            #expect(upload.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("admit refuses before 100 Continue: Expect: 100-continue gets the refusal, not an invitation to send the body")
    func admissionBeforeContinue() async throws {
        let server = try startGatedServer(GateResponder())
        try await offPool {
            let expecting = try RawClient(port: server.port, timeout: 30)
            expecting.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\nExpect: 100-continue\r\n\r\n")
            #expect(expecting.readResponse()?.status == 401)
            #expect(expecting.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("a request without a body is admitted from its head too; its refusal keeps the connection, pipelined requests go on")
    func admissionWithoutBody() async throws {
        let server = try startGatedServer(GateResponder())
        try await offPool {
            let plain = try RawClient(port: server.port, timeout: 30)
            let refused = plain.request(.get("/a"))
            #expect(refused?.status == 401)
            #expect(refused?.header("Connection") == "keep-alive")
            #expect(plain.request(.get("/b").bearer("x"))?.text == "hello /b")
            // Pipelined: a refusal, an empty Content-Length refused, then one admitted, answered in order.
            plain.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\nPUT /d HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
                + "GET /e HTTP/1.1\r\nHost: x\r\nAuthorization: y\r\n\r\n")
            #expect(plain.readResponse()?.status == 401)
            #expect(plain.readResponse()?.status == 401)
            #expect(plain.readResponse()?.text == "hello /e")
            // Connection: close is honoured.
            let closing = plain.request(.get("/f").header("Connection", "close"))
            #expect(closing?.status == 401)
            #expect(closing?.header("Connection") == "close")
            #expect(plain.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("admitted requests go on, and admit and the response see the same request id")
    func admissionRequestIds() async throws {
        let gate = GateResponder()
        let server = try startGatedServer(gate)
        try await offPool {
            let allowed = try RawClient(port: server.port, timeout: 30)
            let echoed = allowed.request(.post("/echo").bearer("x").rawBody("hi"))
            #expect(echoed?.text == "hi")
            let made = allowed.request(.get("/b").bearer("x"))
            #expect(made?.status == 200)
            let given = allowed.request(.get("/c").bearer("x").header("X-Request-ID", "client-id-1"))
            #expect(given?.header("X-Request-ID") == "client-id-1")
            let ids = gate.admitted.withLock { $0 }
            #expect(ids == [echoed?.header("X-Request-ID"), made?.header("X-Request-ID"), "client-id-1"].compactMap { $0 })
            #expect(ids.count == 3, "admit sees each request once")
        }
        await server.shutdown(grace: 1)
    }

    @Test(
        "body bytes in flight are bounded over all connections, counted as they arrive: an upload that does not fit gets 503 while the first goes on")
    func bodyBudget() async throws {
        let observer = RecordingObserver()
        let server = try startServer(observer: observer) { $0.maxBodyBytesInFlight = 1500 }
        try await offPool {
            // A generous read timeout: the first upload's answer comes once its last bytes are sent, however slow the machine.
            let first = try RawClient(port: server.port, timeout: 30)
            first.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "a", count: 900))
            #expect(eventually { server.bodyBytesInFlight == 900 })

            let second = try RawClient(port: server.port, timeout: 30)
            second.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "b", count: 700))
            let refused = second.readResponse()
            #expect(refused?.status == 503)
            #expect(refused?.headers["Retry-After"] == "1")
            #expect(refused?.headers["Content-Type"] == "application/problem+json")
            #expect(refused?.headers["Connection"] == "close")
            #expect(second.isClosedByServer())
            // A chunked body counts its bytes as they arrive too: 700 do not fit next to the first either.
            let chunked = try RawClient(port: server.port, timeout: 30)
            chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2bc\r\n" + String(repeating: "c", count: 700))
            #expect(chunked.readResponse()?.status == 503)
            // Heads that announce bodies and send none hold nothing, whatever they announce.
            let announcing = try (0..<3).map { _ in try RawClient(port: server.port, timeout: 30) }
            for client in announcing { client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n") }
            usleep(100_000)
            #expect(server.bodyBytesInFlight == 900)
            // A small body still fits beside the first.
            let small = try RawClient(port: server.port, timeout: 30)
            #expect(small.request(.post("/echo").rawBody(String(repeating: "d", count: 400)))?.status == 200)

            first.send(String(repeating: "a", count: 100))
            #expect(first.readResponse()?.text == String(repeating: "a", count: 1000))
            #expect(eventually { server.bodyBytesInFlight == 0 })
            // With the budget back, the same upload goes through.
            let again = try RawClient(port: server.port, timeout: 30)
            #expect(again.request(.post("/echo").rawBody(String(repeating: "e", count: 1000)))?.status == 200)
        }
        let refusals = observer.responses.withLock { $0 }.filter { $0.status == 503 }
        #expect(refusals.count == 2)
        #expect(refusals.allSatisfy { $0.reason.contains("in flight") })
        await server.shutdown(grace: 1)
    }

    @Test("heads announcing bodies they never send hold none of the body budget: another client's upload goes through (F1)")
    func announcedBodiesHoldNoBudget() async throws {
        let server = try startServer { $0.maxBodyBytesInFlight = 1024 }
        try await offPool {
            // More announced than the whole budget, on every kind of request: not one byte of it sent.
            let heads = ["GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
                         "HEAD /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
                         "OPTIONS /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
                         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                         "PATCH /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n"]
            let holders = try (0..<16).map { index in
                let client = try RawClient(port: server.port, timeout: 30)
                client.send(heads[index % heads.count])
                return client
            }
            usleep(200_000)
            #expect(server.bodyBytesInFlight == 0)
            let upload = try RawClient(port: server.port, timeout: 30)
            let answer = upload.request(.patch("/echo").rawBody(String(repeating: "u", count: 1000)))
            #expect(answer?.status == 200)
            #expect(answer?.body.count == 1000)
            withExtendedLifetime(holders) {}
        }
        await server.shutdown(grace: 1)
    }

    @Test("the body budget returns to 0 after refused, aborted, timed-out, malformed and completed uploads")
    func bodyBudgetNoLeak() async throws {
        let server = try startServer {
            $0.maxBodyBytesInFlight = 4096
            $0.bodyTimeout = 0.3
        }
        try await offPool {
            for round in 0..<10 {
                var clients: [RawClient] = []
                // Aborted mid-body: the client goes away.
                do {
                    let client = try RawClient(port: server.port, timeout: 30)
                    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf")
                }
                // Stalls mid-body until the body timeout (408).
                let stalled = try RawClient(port: server.port, timeout: 30)
                stalled.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nsome")
                clients.append(stalled)
                // A malformed chunked body (400) and a chunk over the body limit (413).
                let malformed = try RawClient(port: server.port, timeout: 30)
                malformed.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX")
                let oversized = try RawClient(port: server.port, timeout: 30)
                oversized.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n801\r\n")
                clients += [malformed, oversized]
                // Over the budget by now, or not: 503 or a normal answer, both must release.
                let extra = try RawClient(port: server.port, timeout: 30)
                extra.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "d", count: 1000))
                clients.append(extra)
                // Completed, and a client that leaves while its handler still works (the handler is cancelled).
                let done = try RawClient(port: server.port, timeout: 30)
                _ = done.request(.post("/echo").rawBody("ok"))
                do {
                    let leaving = try RawClient(port: server.port, timeout: 30)
                    leaving.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
                }
                if round == 0 {
                    // One that stays holds its body's bytes while its handler works (until released): the budget is in use.
                    let staying = try RawClient(port: server.port, timeout: 60)
                    staying.send("POST /hold/budget HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
                    #expect(eventually { server.bodyBytesInFlight > 0 })
                    TestResponder.release("budget")
                    clients.append(staying)
                }
                for client in clients { _ = client.readResponse() }
            }
            #expect(eventually { server.bodyBytesInFlight == 0 })
            #expect(eventually { server.openConnections == 0 })
        }
        await server.shutdown(grace: 1)
    }
}
