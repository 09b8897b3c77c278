import Dispatch
import Foundation
import Glibc
import TabStoreHTTP
import TabStoreSupport

/// TabStore's HTTP/1.1 server: a listening socket and one epoll event loop per configured thread.
package final class HTTPServer: Sendable {
    private let context: ServerContext
    private let listener: ListeningSocket
    private let loops: [EventLoop]
    /// The port actually bound (useful with port 0).
    package let port: Int

    /// Binds and starts serving.
    /// - Throws: `SystemError` when the address cannot be bound.
    package static func start(
        configuration: ServerConfiguration, responder: any HTTPResponder, state: ServerState = ServerState(),
        observer: (any ServerObserver)? = nil, logger: Logger = .silent
    ) throws -> HTTPServer {
        let listener = try listen(configuration)
        return try start(configuration: configuration, listener: listener, responder: responder, state: state, observer: observer, logger: logger)
    }

    /// Binds and listens only, so a caller can check the address before creating anything else.
    /// - Throws: `SystemError` when the address is invalid or cannot be bound.
    package static func listen(_ configuration: ServerConfiguration) throws(SystemError) -> ListeningSocket {
        try ListeningSocket(host: configuration.host, port: configuration.port, backlog: configuration.listenBacklog)
    }

    /// Starts serving on a socket from `listen`; closes it when the event loops cannot start.
    package static func start(
        configuration: ServerConfiguration, listener: ListeningSocket, responder: any HTTPResponder, state: ServerState,
        observer: (any ServerObserver)?, logger: Logger
    ) throws -> HTTPServer {
        Syscall.ignoreSIGPIPE()
        var configuration = configuration
        if let softLimit = DescriptorLimit.raiseSoftLimit() {
            let fitting = DescriptorLimit.connectionsThatFit(requested: configuration.maxConnections, softLimit: softLimit)
            if fitting < configuration.maxConnections {
                // Past the descriptor limit accept(2) fails instead of the polite 503 at the cap.
                logger.warning("max_connections_lowered", [
                    ("requested", .integer(configuration.maxConnections)), ("effective", .integer(fitting)),
                    ("openFileLimit", .integer(softLimit)), ("reservedDescriptors", .integer(DescriptorLimit.reserve)),
                    ("hint", "raise the open-file limit (ulimit -n, LimitNOFILE=, docker --ulimit nofile=)"),
                ])
                configuration.maxConnections = fitting
            }
        }
        let context = ServerContext(configuration: configuration, responder: responder, state: state, observer: observer, logger: logger)
        var loops: [EventLoop] = []
        do {
            for _ in 0..<max(1, configuration.eventLoops) { loops.append(try EventLoop(context: context, listener: listener)) }
        } catch {
            listener.close()
            throw error
        }
        let server = HTTPServer(context: context, listener: listener, loops: loops)
        for (index, loop) in loops.enumerated() { loop.start(name: "tabstore-loop-\(index)") }
        return server
    }

    private init(context: ServerContext, listener: ListeningSocket, loops: [EventLoop]) {
        self.context = context
        self.listener = listener
        self.loops = loops
        self.port = listener.port
    }

    package var state: ServerState { context.state }

    /// Serves an already connected stream socket on the first event loop; the server owns `fd` from now on.
    /// - Throws: `SystemError` when the socket cannot be made non-blocking.
    package func adopt(connectedSocket fd: Int32) throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw SystemError(call: "fcntl(O_NONBLOCK)", errno: errno) }
        loops[0].adopt(fd)
    }

    package var openConnections: Int { context.openConnections.load(ordering: .relaxed) }

    /// The connection cap in force: the configured one, lowered at start to fit the open-file limit.
    package var maxConnections: Int { context.configuration.maxConnections }

    /// Bytes of request bodies reserved right now (0 when no body is being received or handled).
    package var bodyBytesInFlight: Int { context.bodyBytesInFlight.load(ordering: .relaxed) }

    /// Graceful shutdown: let in-flight requests finish (their responses say `Connection: close`), close idle
    /// connections; after `grace` seconds close whatever is left. Until then the listener stays open and
    /// every request on a connection accepted meanwhile gets the responder's draining answer (503) at once,
    /// so a load balancer's probe sees the drain instead of a connection that hangs; it closes when done.
    package func shutdown(grace: Double) async {
        context.state.startDraining()
        for loop in loops { loop.wake() }
        let loops = self.loops
        let context = self.context
        let listener = self.listener
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Waiting blocks a thread; do it on a thread of its own, not the concurrency pool.
            let thread = Thread {
                let deadline = DispatchTime.now() + grace
                var pending = loops
                pending.removeAll { $0.finished.wait(timeout: deadline) == .success }
                if !pending.isEmpty {
                    context.forceStop.store(true, ordering: .releasing)
                    for loop in pending { loop.wake() }
                    for loop in pending { loop.finished.wait() }
                }
                listener.close()
                continuation.resume()
            }
            thread.start()
        }
    }
}
