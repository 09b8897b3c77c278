import Glibc
import TabStoreHTTP
import TabStoreSupport

/// Everything that bounds the HTTP server, in one value.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests).
    public var port = 8080
    /// Event-loop threads; one per core by default.
    public var eventLoops = max(1, System.coreCount)
    public var limits = HTTPLimits()
    /// Open connections beyond this are answered 503 and closed. Lowered at start when it does not fit under
    /// the open-file limit with `DescriptorLimit.reserve` descriptors to spare (see `HTTPServer.maxConnections`).
    public var maxConnections = 16_384
    /// Bytes of request bodies being received or handled at once, over all connections: a head announcing
    /// a body that does not fit gets 503 before the body is read. A chunked body counts as `limits.maxBodyBytes`.
    /// Never less than `limits.maxBodyBytes`, so one maximal request always fits.
    public var maxBodyBytesInFlight = 64 << 20
    /// Time to receive a whole request head once its first byte arrived.
    public var headerTimeout = 10.0
    /// Time to receive a body once its head arrived.
    public var bodyTimeout = 30.0
    /// Time a keep-alive connection may sit idle between requests.
    public var idleTimeout = 60.0
    /// Time to send a response to a client that stopped reading.
    public var writeTimeout = 30.0
    public var listenBacklog: Int32 = 1024

    public init() {}
}

public enum System {
    /// Cores this process may use.
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
