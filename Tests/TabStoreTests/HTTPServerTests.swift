import Foundation
import Glibc
import Synchronization
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreSupport

/// A responder for server tests: `/slow` waits, `/echo` returns the body, anything else says hello.
struct TestResponder: HTTPResponder {
    func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        switch request.head.path {
        case "/slow":
            try? await Task.sleep(for: .milliseconds(600))
            return HTTPResponse(status: 200, body: Array("slow done".utf8))
        case "/echo":
            return HTTPResponse(status: 200, body: request.body)
        default:
            return HTTPResponse(status: 200, headers: HTTPHeaders([("X-Test", "a\r\nInjected: yes")]), body: Array("hello \(request.head.target)".utf8))
        }
    }
}

/// The test responder behind an admission gate: heads without `Authorization` get 401; it remembers the
/// request ids `admit` saw so a test can compare them with the response's.
struct GateResponder: HTTPResponder {
    let admitted = Locked<[String]>([])

    func admit(_ head: HTTPRequestHead, context: RequestContext) -> HTTPResponse? {
        admitted.withLock { $0.append(context.requestId) }
        return head.headers["Authorization"] == nil ? HTTPResponse(status: 401, body: Array("no credentials".utf8)) : nil
    }

    func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        await TestResponder().respond(to: request, context: context)
    }
}

/// Remembers what the server reported.
final class RecordingObserver: ServerObserver {
    let responses = Locked<[(status: Int, reason: String)]>([])

    func serverResponded(status: Int, reason: String) { responses.withLock { $0.append((status, reason)) } }
    func connectionOpened() {}
    func connectionClosed() {}
}

/// Polls `condition` every 10 ms for up to `seconds`.
func eventually(_ seconds: Double = 3, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Suite("Live HTTP server on 127.0.0.1 port 0", .serialized)
struct HTTPServerTests {
    func startServer(responder: any HTTPResponder = TestResponder(), observer: (any ServerObserver)? = nil,
                     _ adjust: (inout ServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 2
        configuration.limits.maxBodyBytes = 1024
        configuration.limits.maxHeaderBytes = 4096
        adjust(&configuration)
        return try HTTPServer.start(configuration: configuration, responder: responder, observer: observer)
    }

    @Test("keep-alive reuse, Date, Content-Length, request id echo, no header injection")
    func keepAlive() async throws {
        let server = try startServer()
        try await offPool {
            let client = try RawClient(port: server.port)
            let first = try #require(client.request(.get("/a").header("X-Request-ID", "abc-123")))
            #expect(first.status == 200)
            #expect(first.text == "hello /a")
            #expect(first.headers["X-Request-ID"] == "abc-123")
            #expect(first.headers["Connection"] == "keep-alive")
            #expect(first.headers["Date"]?.hasSuffix("GMT") == true)
            #expect(first.headers["Injected"] == nil)
            let second = try #require(client.request(.get("/b").header("X-Request-ID", "bad id with spaces")))
            #expect(second.text == "hello /b")
            #expect(second.headers["X-Request-ID"] != "bad id with spaces")
            #expect(second.headers["X-Request-ID"]?.isEmpty == false)
            let head = try #require(client.request(.head("/c")))
            #expect(head.headers["Content-Length"] == "8")
            #expect(head.body.isEmpty)
            let closing = try #require(client.request(.get("/d").header("Connection", "close")))
            #expect(closing.headers["Connection"] == "close")
            #expect(client.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("pipelined requests are answered in order")
    func pipelining() async throws {
        let server = try startServer()
        try await offPool {
            let client = try RawClient(port: server.port)
            client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            #expect(client.readResponse()?.text == "slow done")
            #expect(client.readResponse()?.text == "hello /2")
            #expect(client.readResponse()?.text == "abc")
        }
        await server.shutdown(grace: 1)
    }

    @Test("a slow client does not block a fast one")
    func slowClient() async throws {
        let server = try startServer { $0.eventLoops = 1 }
        try await offPool {
            let slow = try RawClient(port: server.port)
            slow.send("GET /partial HTTP/1.1\r\nHo")
            let fast = try RawClient(port: server.port)
            let started = Date()
            #expect(fast.request(.get("/fast"))?.status == 200)
            #expect(Date().timeIntervalSince(started) < 2)
            slow.send("st: x\r\n\r\n")
            #expect(slow.readResponse()?.text == "hello /partial")
        }
        await server.shutdown(grace: 1)
    }

    @Test("oversized headers get 431, oversized body 413 before it is read, CL+TE 400; then the connection closes")
    func limits() async throws {
        let server = try startServer()
        try await offPool {
            let big = try RawClient(port: server.port)
            big.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 5000))\r\n\r\n")
            #expect(big.readResponse()?.status == 431)
            #expect(big.isClosedByServer())

            let body = try RawClient(port: server.port)
            body.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
            let refused = body.readResponse()
            #expect(refused?.status == 413)
            #expect(refused?.headers["Content-Type"] == "application/problem+json")
            #expect(refused?.headers["Connection"] == "close")
            #expect(refused?.headers["X-Request-ID"]?.isEmpty == false)

            let smuggle = try RawClient(port: server.port)
            smuggle.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
            #expect(smuggle.readResponse()?.status == 400)
            #expect(smuggle.isClosedByServer())

            let expect = try RawClient(port: server.port)
            expect.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
            #expect(expect.readResponse()?.status == 100)
            expect.send("hi")
            #expect(expect.readResponse()?.text == "hi")
        }
        await server.shutdown(grace: 1)
    }

    @Test("admit refuses from the head: 401 at once, body never awaited, no 100 Continue, connection closed, one request id")
    func admission() async throws {
        let gate = GateResponder()
        let server = try startServer(responder: gate) { $0.limits.maxBodyBytes = 2 << 20 }
        try await offPool {
            // The head of a 1 MB upload and not one body byte: the refusal must not wait for the body.
            let upload = try RawClient(port: server.port, timeout: 3)
            let started = Date()
            upload.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
            let refused = upload.readResponse()
            #expect(refused?.status == 401)
            #expect(refused?.text == "no credentials")
            #expect(refused?.headers["Connection"] == "close")
            #expect(refused?.headers["X-Request-ID"]?.isEmpty == false)
            #expect(upload.isClosedByServer())
            #expect(Date().timeIntervalSince(started) < 2)

            // Expect: 100-continue gets the refusal, not an invitation to send the body.
            let expecting = try RawClient(port: server.port, timeout: 3)
            expecting.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\nExpect: 100-continue\r\n\r\n")
            #expect(expecting.readResponse()?.status == 401)
            #expect(expecting.isClosedByServer())

            // A request without a body is admitted from its head too.
            let plain = try RawClient(port: server.port, timeout: 3)
            #expect(plain.request(.get("/a"))?.status == 401)
            #expect(plain.isClosedByServer())

            // Admitted requests go on; admit and the response see the same request id.
            let allowed = try RawClient(port: server.port, timeout: 3)
            let echoed = allowed.request(.post("/echo").bearer("x").rawBody("hi"))
            #expect(echoed?.text == "hi")
            let made = allowed.request(.get("/b").bearer("x"))
            #expect(made?.status == 200)
            let given = allowed.request(.get("/c").bearer("x").header("X-Request-ID", "client-id-1"))
            #expect(given?.headers["X-Request-ID"] == "client-id-1")
            let ids = gate.admitted.withLock { $0 }
            #expect(ids.suffix(3) == [echoed?.headers["X-Request-ID"], made?.headers["X-Request-ID"], "client-id-1"].compactMap { $0 })
            #expect(ids.count == 6)
        }
        await server.shutdown(grace: 1)
    }

    @Test("body bytes in flight are bounded over all connections: a second large upload gets 503 while the first goes on")
    func bodyBudget() async throws {
        let observer = RecordingObserver()
        let server = try startServer(observer: observer) { $0.maxBodyBytesInFlight = 1500 }
        try await offPool {
            let first = try RawClient(port: server.port, timeout: 3)
            first.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "a", count: 10))
            #expect(eventually { server.bodyBytesInFlight == 1000 })

            let second = try RawClient(port: server.port, timeout: 3)
            second.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n")
            let refused = second.readResponse()
            #expect(refused?.status == 503)
            #expect(refused?.headers["Retry-After"] == "1")
            #expect(refused?.headers["Content-Type"] == "application/problem+json")
            #expect(refused?.headers["Connection"] == "close")
            #expect(second.isClosedByServer())
            // Chunked bodies reserve the whole body limit (1024): does not fit next to the first either.
            let chunked = try RawClient(port: server.port, timeout: 3)
            chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            #expect(chunked.readResponse()?.status == 503)
            // A small body still fits beside the first.
            let small = try RawClient(port: server.port, timeout: 3)
            #expect(small.request(.post("/echo").rawBody(String(repeating: "b", count: 400)))?.status == 200)

            first.send(String(repeating: "a", count: 990))
            #expect(first.readResponse()?.text == String(repeating: "a", count: 1000))
            #expect(eventually { server.bodyBytesInFlight == 0 })
            // With the budget back, the same upload goes through.
            let again = try RawClient(port: server.port, timeout: 3)
            #expect(again.request(.post("/echo").rawBody(String(repeating: "c", count: 1000)))?.status == 200)
        }
        let refusals = observer.responses.withLock { $0 }.filter { $0.status == 503 }
        #expect(refusals.count == 2)
        #expect(refusals.allSatisfy { $0.reason.contains("in flight") })
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
                    let client = try RawClient(port: server.port, timeout: 3)
                    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf")
                }
                // Stalls mid-body until the body timeout (408).
                let stalled = try RawClient(port: server.port, timeout: 3)
                stalled.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nsome")
                clients.append(stalled)
                // A malformed chunked body (400) and a chunk over the body limit (413).
                let malformed = try RawClient(port: server.port, timeout: 3)
                malformed.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX")
                let oversized = try RawClient(port: server.port, timeout: 3)
                oversized.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n801\r\n")
                clients += [malformed, oversized]
                // Over the budget by now, or not: 503 or a normal answer, both must release.
                let extra = try RawClient(port: server.port, timeout: 3)
                extra.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "d", count: 1000))
                clients.append(extra)
                // Completed, and a client that leaves while its handler still works.
                let done = try RawClient(port: server.port, timeout: 3)
                _ = done.request(.post("/echo").rawBody("ok"))
                do {
                    let leaving = try RawClient(port: server.port, timeout: 3)
                    leaving.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
                }
                if round == 0 { #expect(server.bodyBytesInFlight > 0) }
                for client in clients { _ = client.readResponse() }
            }
            #expect(eventually(5) { server.bodyBytesInFlight == 0 })
            #expect(eventually(5) { server.openConnections == 0 })
        }
        await server.shutdown(grace: 1)
    }

    @Test("a client that disconnects mid-body does not disturb the server")
    func disconnectMidBody() async throws {
        let server = try startServer()
        try await offPool {
            do {
                let client = try RawClient(port: server.port)
                client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf")
            }
            usleep(100_000)
            let next = try RawClient(port: server.port)
            #expect(next.request(.get("/after"))?.text == "hello /after")
        }
        await server.shutdown(grace: 1)
    }

    @Test("a request that stops arriving gets 408, an idle connection is closed")
    func timeouts() async throws {
        let server = try startServer {
            $0.headerTimeout = 0.3
            $0.idleTimeout = 0.3
        }
        try await offPool {
            let partial = try RawClient(port: server.port)
            partial.send("GET / HTTP/1.1\r\n")
            #expect(partial.readResponse()?.status == 408)
            let idle = try RawClient(port: server.port)
            let started = Date()
            #expect(idle.isClosedByServer())
            #expect(Date().timeIntervalSince(started) < 5)
        }
        await server.shutdown(grace: 1)
    }

    @Test("connections past the cap are refused politely with 503")
    func connectionCap() async throws {
        let server = try startServer { $0.maxConnections = 2 }
        try await offPool {
            let a = try RawClient(port: server.port)
            let b = try RawClient(port: server.port)
            #expect(a.request(.get("/a"))?.status == 200)
            #expect(b.request(.get("/b"))?.status == 200)
            let c = try RawClient(port: server.port)
            #expect(c.readResponse()?.status == 503)
            #expect(a.request(.get("/a2"))?.status == 200)
        }
        await server.shutdown(grace: 1)
    }

    @Test("shutdown while a request is in flight: it completes, idle connections close, new ones are refused")
    func gracefulShutdown() async throws {
        let server = try startServer()
        let port = server.port
        let busy = try RawClient(port: port)
        let idle = try RawClient(port: port)
        let warm = try await offPool { idle.request(.get("/warm"))?.status }
        #expect(warm == 200)
        busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try await Task.sleep(for: .milliseconds(100))
        let shutdown = Task { await server.shutdown(grace: 5) }
        let response = try await offPool { busy.readResponse() }
        #expect(response?.text == "slow done")
        #expect(response?.headers["Connection"] == "close")
        #expect(try await offPool { idle.isClosedByServer() })
        await shutdown.value
        #expect(throws: (any Error).self) { _ = try RawClient(port: port) }
    }

    @Test("the connection loop over a socketpair: keep-alive, pipelining fed byte by byte, HEAD, a framing error closes")
    func socketpairConnection() async throws {
        let server = try startServer()
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        try server.adopt(connectedSocket: fds[0])
        let client = RawClient(connected: fds[1])
        try await offPool {
            #expect(client.request(.get("/one"))?.text == "hello /one")
            let pipelined = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokHEAD /b HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            for byte in pipelined { client.send([byte]) }
            #expect(client.readResponse()?.text == "hello /a")
            #expect(client.readResponse()?.text == "ok")
            let head = client.readResponse(head: true)
            #expect(head?.status == 200)
            #expect(head?.headers["Content-Length"] == "8")
            client.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n")
            #expect(client.readResponse()?.status == 400)
            #expect(client.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }
}
