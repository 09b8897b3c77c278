import Glibc
import TabStoreHTTP

/// Everything that bounds the HTTP server, in one value.
package struct ServerConfiguration: Sendable {
    package var host = "127.0.0.1"
    /// 0 picks a free port (tests).
    package var port = 8080
    /// Event-loop threads; one per core by default.
    package var eventLoops = max(1, System.coreCount)
    package var limits = HTTPLimits()
    /// Open connections beyond this are answered 503 and closed. Lowered at start when it does not fit under
    /// the open-file limit with `DescriptorLimit.reserve` descriptors to spare (see `HTTPServer.maxConnections`).
    package var maxConnections = 16_384
    /// Bytes of request bodies being received or handled at once, over all connections, counted as they
    /// arrive (never by what a head announces): a body whose bytes do not fit gets 503 and the connection
    /// closes. Never less than `limits.maxBodyBytes`, so one maximal request always fits.
    package var maxBodyBytesInFlight = 64 << 20
    /// Time to receive a whole request head once its first byte arrived; for a connection's first request,
    /// once the connection was accepted.
    package var headerTimeout = 10.0
    /// Time to receive a body once its head arrived.
    package var bodyTimeout = 30.0
    /// Time a keep-alive connection may sit idle between requests.
    package var idleTimeout = 60.0
    /// Time to send a response to a client that stopped reading.
    package var writeTimeout = 30.0
    package var listenBacklog: Int32 = 1024

    package init() {}
}

package enum System {
    /// Cores this process may use.
    package static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
