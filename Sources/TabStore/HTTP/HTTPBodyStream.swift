/// The body of a long-lived response (server-sent events), produced over time and driven by the event loop
/// that holds the connection: no thread per stream. The loop asks `next` when the source woke it and when its
/// deadline passes; the bytes it gets are written as chunks (RFC 9112 §7.1), or until the connection closes
/// for an HTTP/1.0 client. A stream lasts until its source ends it, the client closes, the client stops
/// reading (no byte is taken for the server's write timeout), or the server drains.
///
/// Backpressure: while bytes the stream handed over are not all written to the socket yet, the loop asks
/// `next` with `backlogged` set, and the stream hands over only what must not wait (its end); once the
/// socket took everything, the loop asks again without it. A source that keeps only its newest state (the
/// change feed) so sends a slow reader the newest one, and holds at most one step being written plus what
/// it keeps itself.
///
/// Every method except `wake` (handed over in `start`) is called on the loop's thread, one at a time.
package protocol HTTPBodyStream: AnyObject, Sendable {
    /// The head is about to be written. `wake` asks the loop to call `next` soon; it may be called from any
    /// thread, any number of times, also after the stream ended (then it does nothing).
    /// - Parameter now: monotonic nanoseconds, the clock `next` and its deadlines use.
    func start(now: UInt64, wake: @escaping @Sendable () -> Void)

    /// What to write now.
    /// - Parameter backlogged: bytes handed over before are still unwritten (the client reads slower than the
    ///   stream produces). Hand over nothing that can wait: no state a newer one may replace, no keep-alive
    ///   (the pending bytes are on their way); only an ending, with its last bytes. The loop asks again, not
    ///   backlogged, as soon as the socket took everything.
    func next(now: UInt64, backlogged: Bool) -> HTTPStreamStep

    /// The server drains: the last bytes to write (a goodbye the client understands) before the stream ends.
    func drainingChunk() -> [UInt8]

    /// The connection is done with the stream: it ended, the client left, or the connection failed. Release
    /// what it holds. Called exactly once, whether or not `start` was.
    func finish()
}

/// One answer of `HTTPBodyStream.next`.
package struct HTTPStreamStep: Sendable, Equatable {
    /// Bytes to write now; empty for none.
    package var bytes: [UInt8]
    /// The stream is over once `bytes` are written.
    package var ended: Bool
    /// Ask again at this monotonic time at the latest, even without a wake-up; 0 for only when woken.
    package var deadline: UInt64
    /// With `ended`: the connection closes after the stream (its authorization ended, so a request pipelined
    /// behind it must not be served on it).
    package var closesConnection: Bool

    package init(bytes: [UInt8] = [], ended: Bool = false, deadline: UInt64 = 0, closesConnection: Bool = false) {
        self.bytes = bytes
        self.ended = ended
        self.deadline = deadline
        self.closesConnection = closesConnection
    }
}
