import Dispatch
import Foundation
import Glibc
@testable import TabStoreHTTP
@testable import TabStoreSupport

/// A blocking server-sent-events client for tests, over a real socket: sends one GET, reads the response
/// head, then decodes the chunked body (RFC 9112 §7.1) and splits it into event blocks (lines up to a blank
/// line). `@unchecked Sendable`: each test uses a client from one thread at a time (through `offPool`).
package final class SSEClient: @unchecked Sendable {
    /// One block of the stream: an event (`event`, `id`, `data`), or only comments / a `retry`.
    package struct Block: Sendable, Equatable {
        package var event: String?
        package var id: String?
        package var data: String?
        package var comments: [String] = []
        package var retry: String?

        package var isEvent: Bool { data != nil }
    }

    package let status: Int
    package let headers: HTTPHeaders
    /// A whole body when the answer was not a stream (an error).
    private(set) var body: [UInt8] = []
    private let fd: Int32
    private var raw: [UInt8] = []
    private var decoded: [UInt8] = []
    /// The last chunk (size 0) arrived: the stream is over.
    private(set) var ended = false
    /// The server closed the connection.
    private(set) var closed = false
    private let chunked: Bool

    /// Connects to `port`, sends `request`, reads the head.
    /// - Parameter receiveBuffer: the socket's `SO_RCVBUF`, set before connecting (a small one makes a reader
    ///   that pauses back the server's output up at once); nil for the system's.
    /// - Throws: `SystemError` when the connection fails or no head arrives within 10 seconds.
    package init(port: Int, _ request: TestRequest, receiveBuffer: Int32? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw SystemError(call: "connect", errno: errno)
        }
        var tv = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let wire = request.wire
        _ = wire.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var raw: [UInt8] = []
        var closed = false
        var headEnd: Int?
        // Generous: under the sanitizers, on 2 cores with the whole suite running, the handler's task can wait
        // seconds for a thread (a safety net, not a measurement).
        let deadline = DispatchTime.now().uptimeNanoseconds + 30_000_000_000
        while headEnd == nil {
            guard DispatchTime.now().uptimeNanoseconds < deadline, !closed else {
                Glibc.close(fd)
                throw TestFailure("SSE head")
            }
            _ = Self.fill(fd, &raw, &closed)
            headEnd = Self.find([13, 10, 13, 10], in: raw)
        }
        var lines = String(decoding: raw[0..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        var headers = HTTPHeaders()
        for line in lines where !line.isEmpty {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers.add(String(parts[0]), String(parts.count > 1 ? parts[1] : "").trimmingOWS())
        }
        raw.removeFirst(headEnd! + 4)
        let chunked = headers["Transfer-Encoding"]?.lowercased() == "chunked"
        var body: [UInt8] = []
        var ended = false
        if !chunked, let length = headers["Content-Length"].flatMap({ Int($0) }) {
            while raw.count < length, !closed { _ = Self.fill(fd, &raw, &closed) }
            body = Array(raw.prefix(length))
            ended = true
        }
        self.fd = fd
        self.status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        self.headers = headers
        self.raw = raw
        self.closed = closed
        self.chunked = chunked
        self.body = body
        self.ended = ended
    }

    /// Whether `deinit` still closes the socket (`abort` closed it already).
    private var open = true

    deinit { if open { Glibc.close(fd) } }

    /// Closes the connection (a device going away).
    package func disconnect() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Resets the connection (SO_LINGER 0: the server sees a reset, not an orderly close).
    package func abort() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
        open = false
    }

    /// The next block within `timeout` seconds; nil when none came (or the stream ended first).
    package func nextBlock(timeout: Double = 30) -> Block? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        while true {
            decodeChunks()
            if let end = Self.find([10, 10], in: decoded) {
                let text = String(decoding: decoded[0..<end], as: UTF8.self)
                decoded.removeFirst(end + 2)
                return Self.parse(text)
            }
            if ended || closed || DispatchTime.now().uptimeNanoseconds >= deadline { return nil }
            _ = Self.fill(fd, &raw, &closed)
        }
    }

    /// The next block that is an event, skipping comments and `retry` blocks.
    package func nextEvent(timeout: Double = 30) -> Block? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            guard let block = nextBlock(timeout: Double(deadline - DispatchTime.now().uptimeNanoseconds) / 1e9) else { return nil }
            if block.isEvent { return block }
        }
        return nil
    }

    /// Whether the stream ends (last chunk, or the connection closes) within `timeout` seconds; blocks that
    /// arrive meanwhile are kept.
    package func endsWithin(_ timeout: Double) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        while !(ended || closed), DispatchTime.now().uptimeNanoseconds < deadline {
            _ = Self.fill(fd, &raw, &closed)
            decodeChunks()
        }
        return ended || closed
    }

    /// Whether the server closes the connection (EOF or a reset) within `timeout` seconds, whether or not the
    /// stream's last chunk came first; blocks that arrive meanwhile are kept.
    package func closesWithin(_ timeout: Double) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        while !closed, DispatchTime.now().uptimeNanoseconds < deadline {
            _ = Self.fill(fd, &raw, &closed)
            decodeChunks()
        }
        return closed
    }

    private func decodeChunks() {
        guard chunked else {
            decoded += raw
            raw.removeAll()
            return
        }
        while !ended, let lineEnd = Self.find([13, 10], in: raw) {
            guard let size = Int(String(decoding: raw[0..<lineEnd], as: UTF8.self), radix: 16) else { return }
            if size == 0 {
                ended = true
                return
            }
            guard raw.count >= lineEnd + 2 + size + 2 else { return }
            decoded += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            raw.removeFirst(lineEnd + 2 + size + 2)
        }
    }

    private static func parse(_ text: String) -> Block {
        var block = Block()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { block.comments.append(String(line.dropFirst()).trimmingOWS()); continue }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1].hasPrefix(" ") ? parts[1].dropFirst() : parts[1]) : ""
            switch parts[0] {
            case "event": block.event = value
            case "id": block.id = value
            case "data": block.data = (block.data.map { $0 + "\n" } ?? "") + value
            case "retry": block.retry = value
            default: break
            }
        }
        return block
    }

    /// One recv into `buffer`; false on timeout, EOF (then `closed`) or error.
    private static func fill(_ fd: Int32, _ buffer: inout [UInt8], _ closed: inout Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { closed = true }
        return false
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}

extension LiveService {
    /// Opens a change-feed stream (or whatever the server answers) off the concurrency pool.
    package func follow(_ request: TestRequest, receiveBuffer: Int32? = nil) async throws -> SSEClient {
        let port = self.port
        return try await offPool { try SSEClient(port: port, request, receiveBuffer: receiveBuffer) }
    }
}
