import Glibc

/// `tab-server healthcheck`: a tiny blocking HTTP client for container health checks.
public enum HealthCheck {
    /// True when `GET /healthz` on host:port answers 200 within `timeout` seconds.
    public static func run(host: String, port: Int, timeout: Int = 3) -> Bool {
        let target = (host == "0.0.0.0" || host == "localhost") ? "127.0.0.1" : (host == "::" ? "::1" : host)
        guard let address = SocketAddress(host: target, port: port) else { return false }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let connected = address.withSockaddr { connect(fd, $0, $1) }
        guard connected == 0 else { return false }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 12 else { return false }
        return String(decoding: buffer[0..<12], as: UTF8.self) == "HTTP/1.1 200"
    }
}
