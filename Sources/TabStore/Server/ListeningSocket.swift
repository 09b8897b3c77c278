import CSystem
import Glibc
import TabStoreSupport

/// A non-blocking listening TCP socket on an IPv4 or IPv6 address.
package final class ListeningSocket: Sendable {
    let fd: Int32
    let port: Int

    /// - Throws: `SystemError` when the address is invalid or cannot be bound.
    init(host: String, port: Int, backlog: Int32) throws(SystemError) {
        guard let address = SocketAddress(host: host, port: port) else { throw SystemError(call: "inet_pton(\(host))", errno: EINVAL) }
        let fd = Int32(try Syscall.retrying("socket") {
            Int(socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0))
        })
        Syscall.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        do throws(SystemError) {
            try Syscall.retrying("bind") { address.withSockaddr { Int(bind(fd, $0, $1)) } }
            try Syscall.retrying("listen") { Int(listen(fd, backlog)) }
        } catch {
            Syscall.close(fd)
            throw error
        }
        self.fd = fd
        self.port = Self.boundPort(fd) ?? port
    }

    private static func boundPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            return nil
        }
    }

    package func close() { Syscall.close(fd) }
}
