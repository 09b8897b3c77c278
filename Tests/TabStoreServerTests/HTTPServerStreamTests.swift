import Dispatch
import Foundation
import Testing
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreSupport
import TabStoreTestSupport

/// A stream for server tests: writes `first` at once, then whatever `push` hands it (from any thread, each
/// waking the loop), ends on `end`; says `bye` when the server drains; counts `finish` calls and polls.
/// While backlogged it hands over nothing but its end, as the change feed does.
final class TestStream: HTTPBodyStream {
    private struct State {
        var wake: (@Sendable () -> Void)?
        var queued: [UInt8]
        var ending = false
        var finishes = 0
        var started = false
        var polls = 0
        var backloggedPolls = 0
    }

    private let state: Locked<State>

    init(first: String) { state = Locked(State(queued: Array(first.utf8))) }

    var finishes: Int { state.withLock { $0.finishes } }
    var started: Bool { state.withLock { $0.started } }
    /// How often the loop asked `next`, and how often of those it was backlogged.
    var polls: (all: Int, backlogged: Int) { state.withLock { ($0.polls, $0.backloggedPolls) } }

    /// From any thread, as a commit would. `replacing`: the text replaces what is still queued (a source that
    /// keeps only its newest state, like the change feed).
    func push(_ text: String, end: Bool = false, replacing: Bool = false) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            if replacing { state.queued = [] }
            state.queued += Array(text.utf8)
            state.ending = state.ending || end
            return state.wake
        }
        wake?()
    }

    func start(now: UInt64, wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.wake = wake
            state.started = true
        }
    }

    func next(now: UInt64, backlogged: Bool) -> HTTPStreamStep {
        state.withLock { state in
            state.polls += 1
            if backlogged { state.backloggedPolls += 1 }
            if backlogged, !state.ending { return HTTPStreamStep() }
            defer { state.queued = [] }
            return HTTPStreamStep(bytes: state.queued, ended: state.ending)
        }
    }

    func drainingChunk() -> [UInt8] { Array(": bye\n\n".utf8) }

    func finish() { state.withLock { $0.finishes += 1 } }
}

/// Answers every request with a `TestStream` it keeps, so the test can push to it.
final class StreamingResponder: HTTPResponder {
    let streams = Locked<[TestStream]>([])

    func respond(to request: HTTPRequest, context: RequestContext) async -> HTTPResponse {
        let stream = TestStream(first: ": first\n\n")
        streams.withLock { $0.append(stream) }
        return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), stream: stream)
    }
}

@Suite("Streamed responses on the event loops", .serialized)
struct HTTPServerStreamTests {
    func start(_ responder: StreamingResponder, writeTimeout: Double = 30) throws -> HTTPServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 2
        configuration.writeTimeout = writeTimeout
        return try HTTPServer.start(configuration: configuration, responder: responder, observer: nil)
    }

    /// The next `count` blocks' comment lines (the test stream writes SSE comments), read off the pool.
    static func comments(_ client: SSEClient, _ count: Int) async throws -> [[String]] {
        try await offPool { (0..<count).compactMap { _ in client.nextBlock(timeout: 60) }.map(\.comments) }
    }

    @Test("chunks go out as the source is woken from another thread; the end writes the last chunk; finish once")
    func wakeAndEnd() async throws {
        let responder = StreamingResponder()
        let server = try start(responder)
        let port = server.port
        let client = try await offPool { try SSEClient(port: port, .get("/stream")) }
        #expect(client.status == 200 && client.headers["Transfer-Encoding"] == "chunked" && client.headers["Content-Length"] == nil)
        let stream = try #require(responder.streams.withLock { $0.first })
        #expect(try await Self.comments(client, 1) == [["first"]])
        stream.push(": second\n\n")
        #expect(try await Self.comments(client, 1) == [["second"]])
        DispatchQueue.global().async { stream.push(": third\n\n", end: true) }
        #expect(try await Self.comments(client, 1) == [["third"]])
        #expect(try await offPool { client.endsWithin(30) })
        #expect(await eventually { stream.finishes == 1 })
        await server.shutdown(grace: 1)
        #expect(stream.finishes == 1)
    }

    @Test("a reader that does not keep up: no new chunk is taken while one is unwritten, so it gets the newest, not a cut")
    func backpressure() async throws {
        let responder = StreamingResponder()
        let server = try start(responder)
        let port = server.port
        // A small receive buffer: the server's output backs up as soon as the client pauses.
        let client = try await offPool { try SSEClient(port: port, .get("/stream"), receiveBuffer: 4096) }
        let stream = try #require(responder.streams.withLock { $0.first })
        #expect(try await Self.comments(client, 1) == [["first"]])
        // 100 states of 64 KiB each, 6.4 MB in all (past the write buffer's 1 MiB bound for a stream), while the
        // client reads nothing; each waits until the loop asked the stream, so every one had its chance to be taken.
        let padding = String(repeating: "x", count: 64 * 1024)
        let count = 100
        for index in 0..<count where stream.finishes == 0 {
            let asked = stream.polls.all
            stream.push(": \(index) \(padding)\n\n", replacing: true)
            try #require(await eventually { stream.polls.all > asked || stream.finishes > 0 })
        }
        try #require(stream.finishes == 0, "the server cut the stream")
        #expect(stream.polls.backlogged > 0)
        let received = try await offPool { () -> [Int] in
            var numbers: [Int] = []
            while let block = client.nextBlock(timeout: 30), let number = block.comments.first.flatMap({ Int($0.prefix { $0 != " " }) }) {
                numbers.append(number)
                if number == count - 1 { break }
            }
            return numbers
        }
        // In order, the newest last, most skipped, and the connection is still open.
        #expect(received.last == count - 1 && received == received.sorted() && Set(received).count == received.count)
        #expect(received.count < count / 2, "\(received.count) of \(count)")
        #expect(server.openConnections == 1)
        stream.push(": more\n\n")
        #expect(try await Self.comments(client, 1) == [["more"]])
        await server.shutdown(grace: 1)
    }

    @Test("a reader that takes nothing is still closed by the write timeout, however often its source has more")
    func stalledReader() async throws {
        let responder = StreamingResponder()
        let server = try start(responder, writeTimeout: 5)
        let port = server.port
        let client = try await offPool { try SSEClient(port: port, .get("/stream"), receiveBuffer: 4096) }
        let stream = try #require(responder.streams.withLock { $0.first })
        #expect(try await Self.comments(client, 1) == [["first"]])
        let padding = String(repeating: "x", count: 64 * 1024)
        // Far more than the socket buffers take, then a state every 100 ms: none may extend the write timeout.
        var pushes = 0
        for index in 0..<400 where stream.finishes == 0 {
            stream.push(": \(index) \(padding)\n\n", replacing: true)
            pushes += 1
            if index >= 100 { try await Task.sleep(for: .milliseconds(100)) }
        }
        // Cut while the source still had more (30 s of states against a 5 s timeout), not once it fell silent.
        #expect(pushes < 400)
        #expect(await eventually { stream.finishes == 1 && server.openConnections == 0 })
        #expect(stream.polls.backlogged > 0)
        await server.shutdown(grace: 1)
    }

    @Test("a client that leaves mid-stream, closing or resetting: the source is finished once, the connection closed",
          arguments: [false, true])
    func clientLeaves(reset: Bool) async throws {
        let responder = StreamingResponder()
        let server = try start(responder)
        let port = server.port
        let client = try await offPool { try SSEClient(port: port, .get("/stream")) }
        let stream = try #require(responder.streams.withLock { $0.first })
        #expect(try await Self.comments(client, 1) == [["first"]])
        if reset { client.abort() } else { client.disconnect() }
        stream.push(": into the void\n\n")  // a write to a closed socket fails: the loop closes and finishes
        #expect(await eventually { stream.finishes == 1 && server.openConnections == 0 })
        await server.shutdown(grace: 1)
        #expect(stream.finishes == 1)
    }

    @Test("draining: the source's goodbye is written, the stream ends, and the drain does not wait for it")
    func drain() async throws {
        let responder = StreamingResponder()
        let server = try start(responder)
        let port = server.port
        let client = try await offPool { try SSEClient(port: port, .get("/stream")) }
        let stream = try #require(responder.streams.withLock { $0.first })
        #expect(try await Self.comments(client, 1) == [["first"]])
        let reader = Task { try await offPool { () -> ([String]?, Bool) in
            let goodbye = client.nextBlock(timeout: 30)?.comments
            let ended = client.endsWithin(30)
            client.disconnect()
            return (goodbye, ended)
        } }
        try await Task.sleep(for: .milliseconds(100))
        let started = DispatchTime.now().uptimeNanoseconds
        // A grace far longer than the bound: a drain that waited for the stream would take all of it.
        await server.shutdown(grace: 60)
        #expect(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 < 30)
        let (goodbye, ended) = try await reader.value
        #expect(goodbye == ["bye"] && ended)
        #expect(stream.finishes == 1 && stream.started)
    }
}
