import Foundation
import Glibc
import Synchronization
import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreSupport
import TabStoreTestSupport

/// A responder for server tests: `/slow` waits, `/echo` returns the body, anything else says hello.
struct TestResponder: HTTPResponder {
    /// How many `/slower` requests have started.
    static let slowerStarted = Atomic<Int>(0)
    /// The `/hold/<key>` keys (as bytes) whose requests may answer now.
    static let released = Locked<Set<[UInt8]>>([])

    static func release(_ key: String) { released.withLock { _ = $0.insert(Array(key.utf8)) } }

    func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        switch request.head.path {
        case "/slower":
            // Tells the test it is in flight, then stays in flight long enough for a shutdown to begin meanwhile.
            TestResponder.slowerStarted.add(1, ordering: .sequentiallyConsistent)
            try? await Task.sleep(for: .seconds(2))
            return HTTPResponse(status: 200, body: Array("slow done".utf8))
        case "/slow":
            try? await Task.sleep(for: .milliseconds(600))
            return HTTPResponse(status: 200, body: Array("slow done".utf8))
        case let path where path.hasPrefix("/hold/"):
            // Stays in flight until the test releases its key (at most 60 s): "while its handler works" without a timer.
            let key = Array(path.utf8.dropFirst(6))
            for _ in 0..<6000 where !TestResponder.released.withLock({ $0.contains(key) }) { try? await Task.sleep(for: .milliseconds(10)) }
            return HTTPResponse(status: 200, body: Array("held".utf8))
        case "/echo":
            return HTTPResponse(status: 200, body: request.body)
        default:
            return HTTPResponse(
                status: 200, headers: HTTPHeaders([("X-Test", "a\r\nInjected: yes")]), body: Array("hello \(request.head.target)".utf8))
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

    @Test("a connection serves several requests, says keep-alive, and closes after Connection: close")
    func keepAlive() async throws {
        let server = try startServer()
        try await offPool {
            let client = try RawClient(port: server.port)
            let first = try #require(client.request(.get("/a")))
            #expect(first.status == 200)
            #expect(first.text == "hello /a")
            #expect(first.header("Connection") == "keep-alive")
            let second = try #require(client.request(.get("/b")))
            #expect(second.text == "hello /b")
            let closing = try #require(client.request(.get("/d").header("Connection", "close")))
            #expect(closing.header("Connection") == "close")
            #expect(client.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("every response carries a Date in GMT")
    func dateHeader() async throws {
        let server = try startServer()
        try await offPool {
            let response = try #require(try RawClient(port: server.port).request(.get("/a")))
            #expect(response.header("Date")?.hasSuffix("GMT") == true)
        }
        await server.shutdown(grace: 1)
    }

    @Test("a sane X-Request-ID is echoed; one with spaces is replaced by one the server makes")
    func requestIdEcho() async throws {
        let server = try startServer()
        try await offPool {
            let client = try RawClient(port: server.port)
            let first = try #require(client.request(.get("/a").header("X-Request-ID", "abc-123")))
            #expect(first.header("X-Request-ID") == "abc-123")
            let second = try #require(client.request(.get("/b").header("X-Request-ID", "bad id with spaces")))
            #expect(second.header("X-Request-ID") != "bad id with spaces")
            #expect(second.header("X-Request-ID")?.isEmpty == false)
        }
        await server.shutdown(grace: 1)
    }

    @Test("HEAD gets the Content-Length of the GET and no body")
    func headContentLength() async throws {
        let server = try startServer()
        try await offPool {
            let head = try #require(try RawClient(port: server.port).request(.head("/c")))
            #expect(head.header("Content-Length") == "8")
            #expect(head.body.isEmpty)
        }
        await server.shutdown(grace: 1)
    }

    @Test("a header value holding CR LF never becomes a header of its own (no response splitting)")
    func noHeaderInjection() async throws {
        let server = try startServer()
        try await offPool {
            let response = try #require(try RawClient(port: server.port).request(.get("/a")))
            #expect(response.header("X-Test") != nil)
            #expect(response.header("Injected") == nil)
        }
        await server.shutdown(grace: 1)
    }

    @Test("pipelined requests are answered in order")
    func pipelining() async throws {
        let server = try startServer()
        try await offPool {
            let client = try RawClient(port: server.port)
            client.send(
                "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            )
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
            // Answered while the slow one's head is still partial (blocked behind it, it would get no answer at all).
            let fast = try RawClient(port: server.port)
            #expect(fast.request(.get("/fast"))?.status == 200)
            slow.send("st: x\r\n\r\n")
            #expect(slow.readResponse()?.text == "hello /partial")
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
            #expect(idle.isClosedByServer())
        }
        await server.shutdown(grace: 1)
    }

    @Test("a fresh connection that sends nothing is closed at the header timeout, not the idle timeout")
    func freshConnectionHeaderTimeout() async throws {
        let server = try startServer {
            $0.headerTimeout = 0.3
            $0.idleTimeout = 300
        }
        try await offPool {
            let silent = try RawClient(port: server.port, timeout: 400)
            let started = Date()
            #expect(silent.isClosedByServer())
            // Which timeout closed it, 0.3 s or 300 s: anything under a minute says the header timeout did.
            #expect(Date().timeIntervalSince(started) < 60)
            #expect(silent.readResponse() == nil, "closed without an answer")
            // A keep-alive connection between requests keeps the idle timeout.
            let kept = try RawClient(port: server.port, timeout: 3)
            #expect(kept.request(.get("/a"))?.status == 200)
            #expect(!kept.isClosedByServer())
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
        let before = TestResponder.slowerStarted.load(ordering: .sequentiallyConsistent)
        busy.send("GET /slower HTTP/1.1\r\nHost: x\r\n\r\n")
        // The shutdown begins once the request is in flight (not after a guessed pause).
        for _ in 0..<3_000 where TestResponder.slowerStarted.load(ordering: .sequentiallyConsistent) == before {
            try await Task.sleep(for: .milliseconds(10))
        }
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
            let pipelined = Array(
                "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokHEAD /b HTTP/1.1\r\nHost: x\r\n\r\n"
                    .utf8)
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
