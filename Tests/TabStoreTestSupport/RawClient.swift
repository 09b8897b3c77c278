import Foundation
import Glibc
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

/// Runs blocking work on a thread of its own, so blocking socket calls in tests never occupy the
/// concurrency pool the server's handlers need (the machine has two cores: two pool threads).
package func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// A blocking TCP client for tests: sends raw bytes, reads whole HTTP responses.
/// `@unchecked Sendable`: each test uses a client from one thread at a time.
package final class RawClient: @unchecked Sendable {
    package typealias Response = TestResponse

    package let fd: Int32
    private var buffer: [UInt8] = []
    /// The receive timeout in seconds, for `failure`.
    private var timeout = 10
    /// What ended the last read that got nothing: the server's close, the timeout, or the errno (for the
    /// message of a test that failed, instead of "Success").
    private(set) var failure: String?

    package init(port: Int, timeout: Int = 60) throws {
        self.timeout = timeout
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw SystemError(call: "connect", errno: errno) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A client over an already connected socket (a socketpair end).
    package init(connected fd: Int32, timeout: Int = 10) {
        self.fd = fd
        self.timeout = timeout
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Whether `deinit` still closes the socket (`abort` closed it already).
    private var open = true

    deinit { if open { Glibc.close(fd) } }

    /// Resets the connection (SO_LINGER 0: the server sees a reset, not an orderly close).
    package func abort() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
        open = false
    }

    package func send(_ text: String) { send(Array(text.utf8)) }

    package func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Reads more bytes; false on EOF, error or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            let error = errno
            failure = switch (count, error) {
            case (0, _): "the server closed the connection after \(buffer.count) unread bytes"
            case (_, EAGAIN), (_, EWOULDBLOCK): "no answer within the \(timeout) s receive timeout (\(buffer.count) bytes read)"
            default: "recv failed: \(String(cString: strerror(error))) (errno \(error))"
            }
            return false
        }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// Whether the server closed the connection within the timeout: true on EOF or a reset
    /// (ECONNRESET/EPIPE), false when the receive timeout expires with the connection still open.
    /// Bytes that arrive meanwhile are kept for `readResponse`.
    package func isClosedByServer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                continue
            }
            if count == 0 { return true }
            switch errno {
            case EINTR: continue
            case ECONNRESET, EPIPE, ENOTCONN: return true
            default: return false  // EAGAIN/EWOULDBLOCK: the timeout passed, the connection is open
            }
        }
    }

    /// Reads one response (Content-Length framed; `head` for HEAD requests).
    package func readResponse(head: Bool = false) -> Response? {
        while true {
            if let end = findHeadEnd() {
                let headText = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = headText.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
                var headers = HTTPHeaders()
                for line in lines where !line.isEmpty {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    headers.add(String(parts[0]), String(parts.count > 1 ? parts[1] : "").trimmingOWS())
                }
                let length = head ? 0 : Int(headers["Content-Length"] ?? "0") ?? 0
                while buffer.count < end + 4 + length { guard fill() else { return nil } }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, body: body)
            }
            guard fill() else { return nil }
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10
        {
            return index
        }
        return nil
    }

    /// Sends `request` and reads its response (nil when the connection closes or times out first).
    package func request(_ request: TestRequest) -> Response? {
        send(request.wire)
        return readResponse(head: request.method == "HEAD")
    }
}
