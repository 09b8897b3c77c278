import CSystem
import Dispatch
import Foundation
import Glibc
import TabStoreHTTP
import TabStoreSupport

/// One epoll event loop on its own thread: the driver between the sockets and each connection's
/// `ConnectionStateMachine`. It turns readiness into machine events, performs the actions the machine
/// answers with (system calls, the responder, encoding into the connection's `WriteBuffer`), and reports
/// their outcome back, until the machine waits. Policy (what to read, when to answer, time out or close)
/// lives in the machine; accepting, the overload answer and the wiring live here.
///
/// `@unchecked Sendable`: every stored `var` is touched only by the loop's own thread; other threads
/// reach the loop only through `inbox` and `adoptions` (each behind a lock) and `wake()`. The members
/// without `private` are used by `EventLoop+Actions.swift` (same thread) and by nothing else.
final class EventLoop: @unchecked Sendable {
    /// A response made off the loop, for the connection `token`.
    struct Delivery {
        let token: UInt64
        let response: HTTPResponse
    }

    typealias Action = ConnectionStateMachine.Action

    private static let listenerToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1
    private static let lingerTimeout: UInt64 = 2_000_000_000
    private static let sweepInterval: UInt64 = 200_000_000
    private static let readChunk = 64 * 1024

    let context: ServerContext
    private let listener: ListeningSocket
    let selector: EpollSelector
    private let connectionConfiguration: ConnectionStateMachine.Configuration
    let inbox = Locked<[Delivery]>([])
    /// Sockets handed over by `adopt`, registered by the loop's own thread on its next wake-up.
    private let adoptions = Locked<[Int32]>([])
    /// Connections whose stream asked to be polled (from any thread), taken by the loop on its next turn.
    let streamWakes = Locked<[UInt64]>([])
    let finished = DispatchSemaphore(value: 0)

    /// The open connections by token (`EventLoop+Streams` looks up woken ones).
    var connections: [UInt64: Connection] = [:]
    /// How many of `connections` were accepted while draining: they only get the draining answer, and the
    /// loop does not wait for them.
    private var lateConnections = 0
    private var nextToken: UInt64 = 2
    /// Whether the listener is registered with this loop's epoll (not during an accept backoff).
    private var listenerArmed = false
    /// Whether the connections were told the server drains.
    private var draining = false
    private var lastSweep: UInt64 = 0
    private var dateSecond: time_t = 0
    private var dateText = ""
    private var readBuffer = [UInt8](repeating: 0, count: readChunk)

    init(context: ServerContext, listener: ListeningSocket) throws(SystemError) {
        self.context = context
        self.listener = listener
        selector = try EpollSelector(wakeToken: Self.wakeToken)
        connectionConfiguration = ConnectionStateMachine.Configuration(context.configuration, lingerTimeout: Self.lingerTimeout,
                                                                       readChunk: Self.readChunk)
    }

    func start(name: String) {
        NamedThread.start(name) { [self] in self.run() }
    }

    /// Wakes the loop from another thread.
    func wake() { selector.wake() }

    // MARK: - Loop

    private func run() {
        armListener()
        running: while true {
            var timeout: Int32 = 200
            if !listenerArmed {
                let now = ServerContext.monotonicNow()
                timeout = context.acceptBackoff.withLock { $0.millisecondsToResume(now: now, cap: timeout) }
                if timeout == 0 {
                    armListener()
                    timeout = 200
                }
            }
            let count: Int
            switch selector.wait(timeout: timeout) {
            case .success(let ready): count = ready
            case .failure(let error):
                context.logger.error("epoll_wait_failed", [("errno", .integer(Int(error.errno)))])
                break running
            }
            if !draining, context.state.isDraining { startDraining() }
            for index in 0..<count {
                switch selector.token(at: index) {
                case Self.listenerToken: acceptConnections()
                case Self.wakeToken: drainWake()
                case let token: handle(token: token, readiness: selector.readiness(at: index))
                }
            }
            deliverResponses()
            pollWokenStreams()
            let now = ServerContext.monotonicNow()
            if now &- lastSweep > Self.sweepInterval {
                lastSweep = now
                sweep(now: now)
            }
            if draining {
                // Done when every connection open before the drain is: those accepted since only get 503 and
                // are closed now (as is everything once the grace period is over).
                if context.forceStop.load(ordering: .acquiring) || connections.count == lateConnections {
                    for connection in Array(connections.values) { perform(connection.machine.forceStop(), on: connection, now: now) }
                }
                if connections.isEmpty { break }
            }
        }
        disarmListener()
        selector.close()
        finished.signal()
    }

    private func drainWake() {
        selector.consumeWake()
        for fd in adoptions.withLock({ pending -> [Int32] in defer { pending.removeAll() }; return pending }) { register(fd) }
    }

    /// Each connection decides (idle ones close, in-flight requests finish, streams end). The loop keeps
    /// accepting until it is done: a connection accepted meanwhile gets 503 for its request at once (a load
    /// balancer's `/readyz` probe sees the drain) instead of waiting in the backlog for a reset.
    private func startDraining() {
        draining = true
        let now = ServerContext.monotonicNow()
        for connection in Array(connections.values) {
            // A stream says goodbye (its draining chunk) before it ends; it is not waited for.
            sendDrainingChunk(connection, now: now)
            if connections[connection.token] != nil { perform(connection.machine.drainStarted(now: now), on: connection, now: now) }
        }
    }

    private func sweep(now: UInt64) {
        for connection in connections.values.filter({ $0.machine.isExpired(at: now) }) {
            // A stream's reader that took bytes since the write deadline was armed is slow, not stalled: the
            // deadline starts again (it gets the newest state once it is through), instead of a cut.
            if connection.stream != nil, connection.machine.outputPending {
                let unsent = connection.unsentBytes
                if unsent < connection.unsentAtDeadline {
                    connection.unsentAtDeadline = unsent
                    perform(connection.machine.writePending(now: now, backlogFull: false), on: connection, now: now)
                    continue
                }
            }
            perform(connection.machine.timerFired(now: now), on: connection, now: now)
        }
        for connection in connections.values.filter({ $0.streamDeadline != 0 && $0.streamDeadline <= now }) where connections[connection.token] != nil
        {
            pollStream(connection, now: now)
        }
    }

    // MARK: - Accepting

    private func armListener() {
        guard !listenerArmed else { return }
        listenerArmed = selector.registerExclusive(listener: listener.fd, token: Self.listenerToken)
    }

    private func disarmListener() {
        guard listenerArmed else { return }
        selector.deregister(listener.fd)
        listenerArmed = false
    }

    private func acceptConnections() {
        guard listenerArmed else { return }
        for _ in 0..<256 {
            let accepted: Int?
            do {
                accepted = try Syscall.nonBlocking("accept4") { Int(tabstore_accept4(listener.fd)) }
            } catch {
                // Out of descriptors the listener stays readable: back off instead of spinning (see AcceptBackoff).
                let decision = context.acceptBackoff.withLock { $0.failed(errno: error.errno, now: ServerContext.monotonicNow()) }
                if decision.log {
                    context.logger.warning("accept_failed", [("error", .string(error.description)), ("suppressed", .integer(decision.suppressed)),
                                                             ("pauseMs", .integer(decision.pause ? Int(AcceptBackoff.pause / 1_000_000) : 0))])
                }
                if decision.pause {
                    disarmListener()
                    return
                }
                continue
            }
            guard let accepted else { return }
            let fd = Int32(accepted)
            let open = context.openConnections.add(1, ordering: .relaxed).newValue
            if open > context.configuration.maxConnections {
                // Over the cap: a polite, immediate 503 instead of a silent reset.
                context.openConnections.subtract(1, ordering: .relaxed)
                var out: [UInt8] = []
                var response = ServerProblem.response(503, "too many open connections; retry later")
                response.headers.add("Retry-After", "1")
                response.headers.add("X-Request-ID", context.makeRequestId())
                ResponseEncoder.encode(response, keepAlive: false, includeBody: true, date: httpDate(), into: &out)
                _ = out.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                Syscall.close(fd)
                context.observer?.serverResponded(status: 503, reason: "connection limit")
                continue
            }
            Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            register(fd)
        }
    }

    /// Starts serving a connected, non-blocking socket on this loop's thread.
    private func register(_ fd: Int32) {
        let now = ServerContext.monotonicNow()
        let mask = EpollSelector.mask(.read)
        let machine = ConnectionStateMachine(configuration: connectionConfiguration, now: now, acceptedWhileDraining: draining)
        let connection = Connection(fd: fd, token: nextToken, registeredMask: mask, machine: machine, output: WriteBuffer())
        nextToken += 1
        connections[connection.token] = connection
        if draining { lateConnections += 1 }
        selector.register(fd, mask: mask, token: connection.token)
        context.observer?.connectionOpened()
    }

    /// Serves an already connected socket (a socketpair end in tests, an inherited socket): the same
    /// connection loop as accepted ones.
    func adopt(_ fd: Int32) {
        context.openConnections.add(1, ordering: .relaxed)
        adoptions.withLock { $0.append(fd) }
        wake()
    }

    // MARK: - Socket events

    private func handle(token: UInt64, readiness: EpollSelector.Readiness) {
        guard let connection = connections[token] else { return }
        let now = ServerContext.monotonicNow()
        if case .lingering = connection.machine.phase {
            discardInput(connection, now: now)
            return
        }
        if readiness.failed {
            perform(connection.machine.connectionFailed(), on: connection, now: now)
            return
        }
        if readiness.writable, connection.output.hasPending {
            perform(flush(connection, now: now), on: connection, now: now)
            if case .closed = connection.machine.phase { return }
            resumeStream(connection, now: now)
        }
        if readiness.readable, connection.machine.acceptsInput {
            readInput(connection, now: now)
        }
    }

    private enum ReadOutcome {
        case data(Int)
        case wouldBlock
        case endOfStream
        case failed
    }

    /// One read(2) into the loop's scratch buffer.
    private func readChunk(_ fd: Int32) -> ReadOutcome {
        do {
            let count = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                try Syscall.nonBlocking("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            }
            guard let count else { return .wouldBlock }
            return count == 0 ? .endOfStream : .data(count)
        } catch {
            return .failed
        }
    }

    /// Reads while the machine wants input (up to its cap), then reports the read as one event.
    private func readInput(_ connection: Connection, now: UInt64) {
        var ended = false
        reading: while connection.machine.wantsInput {
            switch readChunk(connection.fd) {
            case .data(let count):
                connection.machine.append(readBuffer[0..<count])
                if count < readBuffer.count { break reading }
            case .wouldBlock:
                break reading
            case .endOfStream:
                ended = true
                break reading
            case .failed:
                perform(connection.machine.connectionFailed(), on: connection, now: now)
                return
            }
        }
        perform(ended ? connection.machine.inputEnded(now: now) : connection.machine.inputReceived(now: now), on: connection, now: now)
        if ended, case .processing = connection.machine.phase { clientLeft(connection) }
    }

    /// The client closed (or reset) the connection while its request is handled off the loop: the handler is
    /// cancelled, so one that waits (a long poll) answers at once and gives back what it holds (its place
    /// among the user's followers) instead of waiting out its time for nobody. Handlers that do not wait
    /// ignore it; the answer is written if the socket still takes it (a client that only half-closed reads it).
    func clientLeft(_ connection: Connection) {
        connection.handler?.cancel()
        connection.handler = nil
    }

    /// Lingering: what the client still sends is read and dropped until it closes.
    private func discardInput(_ connection: Connection, now: UInt64) {
        while true {
            switch readChunk(connection.fd) {
            case .data: continue
            case .wouldBlock: return  // more may come
            case .endOfStream, .failed:
                perform(connection.machine.inputEnded(now: now), on: connection, now: now)
                return
            }
        }
    }

    /// Hands each response made off the loop to its connection (gone or not processing: dropped).
    private func deliverResponses() {
        let deliveries = inbox.withLock { inbox -> [Delivery] in
            let taken = inbox
            inbox.removeAll(keepingCapacity: true)
            return taken
        }
        for delivery in deliveries {
            guard let connection = connections[delivery.token] else {
                delivery.response.stream?.finish()  // the client left before its stream could start
                continue
            }
            connection.handler = nil
            let now = ServerContext.monotonicNow()
            perform(answered(connection, delivery.response, now: now), on: connection, now: now)
        }
    }

    func close(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.token) != nil else { return }
        clientLeft(connection)
        finishStream(connection)
        if connection.machine.acceptedWhileDraining { lateConnections -= 1 }
        selector.deregister(connection.fd)
        Syscall.close(connection.fd)
        context.openConnections.subtract(1, ordering: .relaxed)
        context.observer?.connectionClosed()
    }

    func httpDate() -> String {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            dateText = ResponseEncoder.httpDate(now)
        }
        return dateText
    }
}
