import Glibc
import TabStoreHTTP

/// One client connection: its socket, its lifecycle (a `ConnectionStateMachine`) and its pending output.
/// Owned and touched only by its event loop's thread.
final class Connection {
    // Widest first: no padding in an object every open connection holds.
    let token: UInt64
    let fd: Int32
    /// The epoll mask registered for the socket, so an unchanged interest costs no epoll_ctl.
    var registeredMask: UInt32
    var output: WriteBuffer
    var machine: ConnectionStateMachine
    /// The streamed response being sent, from its head until the machine finishes it.
    var stream: (any HTTPBodyStream)?
    /// When the stream wants to be asked again without a wake-up (monotonic nanoseconds); 0 for never.
    var streamDeadline: UInt64 = 0
    /// The handler answering the current request off the loop, until its response is delivered: cancelled
    /// when the client goes away meanwhile, so a handler that waits (a long poll) lets go at once.
    var handler: Task<Void, Never>?
    /// The stream was last asked while its output was backlogged: it is asked again once the socket took
    /// everything (`EventLoop.resumeStream`).
    var streamBacklogged = false
    /// A stream's bytes the kernel still held unsent when its write deadline was last armed: a reader that took
    /// some since is slow, not stalled, and keeps its connection (`EventLoop.sweep`).
    var unsentAtDeadline = 0

    init(fd: Int32, token: UInt64, registeredMask: UInt32, machine: ConnectionStateMachine, output: WriteBuffer) {
        self.fd = fd
        self.token = token
        self.registeredMask = registeredMask
        self.machine = machine
        self.output = output
    }
}

extension Connection {
    /// The kernel's send buffer for a stream: small, so it never holds more than a couple of stale events a slow
    /// reader must get through before the newest state (Linux doubles the value; the default grows to megabytes).
    static let streamSendBuffer: Int32 = 64 << 10

    /// Caps the socket's send buffer once it carries a stream.
    func capSendBuffer() {
        var size = Self.streamSendBuffer
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Bytes written to the socket the peer has not acknowledged yet (`SIOCOUTQ`); 0 when unknown.
    var unsentBytes: Int {
        var queued: Int32 = 0
        return ioctl(fd, UInt(TIOCOUTQ), &queued) == 0 ? Int(queued) : 0
    }
}
