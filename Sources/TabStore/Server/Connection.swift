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

    init(fd: Int32, token: UInt64, registeredMask: UInt32, machine: ConnectionStateMachine, output: WriteBuffer) {
        self.fd = fd
        self.token = token
        self.registeredMask = registeredMask
        self.machine = machine
        self.output = output
    }
}
