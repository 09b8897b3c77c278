import Glibc
import TabStoreServer

/// `tab-server healthcheck`: a tiny blocking HTTP client for container health checks.
public enum HealthCheck {
    /// Nil when `GET /healthz` on host:port answers 200 within `timeout` seconds, else one line saying
    /// what failed (the connection, with the address tried, or the status the server answered).
    public static func check(host: String, port: Int, timeout: Int = 3) -> String? {
        let target = (host == "0.0.0.0" || host == "localhost") ? "127.0.0.1" : (host == "::" ? "::1" : host)
        let shown = target.contains(":") ? "[\(target)]:\(port)" : "\(target):\(port)"
        guard let address = SocketAddress(host: target, port: port) else { return "\(host) is not an IP address" }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return "cannot open a socket: \(String(cString: strerror(errno)))" }
        defer { Glibc.close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let connected = address.withSockaddr { connect(fd, $0, $1) }
        guard connected == 0 else { return "cannot connect to \(shown): \(reason(errno))" }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            return "cannot send GET /healthz to \(shown): \(reason(errno))"
        }
        // The status line's first 12 bytes ("HTTP/1.1 200") may come in more than one segment.
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while head.count < 12 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                return count == 0 ? "\(shown) closed the connection without answering GET /healthz"
                                  : "no answer to GET /healthz from \(shown): \(reason(errno))"
            }
            head += buffer[0..<count]
        }
        let status = String(decoding: head[9..<12], as: UTF8.self)
        guard String(decoding: head[0..<9], as: UTF8.self).hasPrefix("HTTP/1.") else {
            return "\(shown) did not answer GET /healthz with HTTP"
        }
        return status == "200" ? nil : "GET /healthz on \(shown) answered \(status)"
    }

    private static func reason(_ code: Int32) -> String {
        code == EAGAIN || code == EWOULDBLOCK || code == EINPROGRESS ? "timed out" : String(cString: strerror(code))
    }
}
