import Glibc

/// An IPv4 or IPv6 address and port, ready for bind(2) or connect(2).
package struct SocketAddress {
    package let family: Int32
    private var storage = sockaddr_storage()
    private let length: socklen_t

    /// Parses a numeric address (`localhost` means 127.0.0.1); nil when it is neither IPv4 nor IPv6.
    package init?(host: String, port: Int) {
        let address = host == "localhost" ? "127.0.0.1" : host
        if address.contains(":") {
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, address, &addr.sin6_addr) == 1 else { return nil }
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeBytes(of: &addr) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, address, &addr.sin_addr) == 1 else { return nil }
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeBytes(of: &addr) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
        }
    }

    /// Calls bind(2) or connect(2) (or any call of that shape) with the address.
    package func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
        var copy = storage
        return try withUnsafePointer(to: &copy) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }
}
