import TabStoreHTTP
import TabStoreSupport

/// The driver's half for streamed responses: a stream lives on the loop that holds its connection, is polled
/// when its source wakes the loop (from any thread) or its deadline passes, and is finished exactly once.
extension EventLoop {
    /// The machine's event for a responder's answer: a stream starts, a whole response is sent. A stream the
    /// connection can no longer take (it is not waiting for an answer) is finished at once.
    func answered(_ connection: Connection, _ response: HTTPResponse, now: UInt64) -> Action {
        guard let stream = response.stream else { return connection.machine.responseReady(response, now: now) }
        guard case .processing = connection.machine.phase else {
            stream.finish()
            return .wait(connection.machine.interest)
        }
        return connection.machine.streamStarted(response, now: now)
    }

    /// The stream's head is being written: the connection holds the stream from now on, and it is polled on
    /// this turn for what it has already (a first event).
    func attachStream(_ stream: (any HTTPBodyStream)?, to connection: Connection, now: UInt64) {
        guard let stream else { return }
        connection.stream = stream
        connection.capSendBuffer()
        let token = connection.token
        stream.start(now: now) { [weak self] in self?.wakeStream(token) }
        streamWakes.withLock { $0.append(token) }  // this loop's own thread: polled after this turn's events
    }

    /// From any thread: polls the connection's stream on the loop's next turn. The loop is signalled only by
    /// the first wake-up of a turn, so a commit that wakes a thousand streams costs one eventfd write per loop.
    func wakeStream(_ token: UInt64) {
        let first = streamWakes.withLock { wakes -> Bool in
            wakes.append(token)
            return wakes.count == 1
        }
        if first { wake() }
    }

    /// Polls every stream woken since the last turn (a connection gone meanwhile is skipped).
    func pollWokenStreams() {
        let woken = streamWakes.withLock { wakes -> [UInt64] in
            defer { wakes.removeAll(keepingCapacity: true) }
            return wakes
        }
        guard !woken.isEmpty else { return }
        let now = ServerContext.monotonicNow()
        for token in woken {
            guard let connection = connections[token] else { continue }
            pollStream(connection, now: now)
        }
    }

    /// Asks the stream what to write and hands it to the machine; an ended stream then finishes.
    ///
    /// Backpressure, with a low-water mark of zero: while any byte of the connection's output is unwritten,
    /// the stream is asked `backlogged` and hands over only its end (a last event), never a state or a
    /// keep-alive; `resumeStream` asks again once the socket took everything. The kernel's send buffer keeps
    /// the pipe full meanwhile, so a reader that keeps up loses nothing, and a slower one gets the newest
    /// state the stream kept instead of a queue of old ones. A stream's output so holds at most one step
    /// (for the change feed: the opening and one event of at most the customization limit plus its framing,
    /// or a keep-alive), then its last event and the terminating chunk.
    func pollStream(_ connection: Connection, now: UInt64) {
        guard let stream = connection.stream, case .streaming = connection.machine.phase else { return }
        let backlogged = connection.output.hasPending
        connection.streamBacklogged = backlogged
        let step = stream.next(now: now, backlogged: backlogged)
        connection.streamDeadline = step.deadline
        if !step.bytes.isEmpty {
            perform(connection.machine.chunkAvailable(step.bytes, now: now), on: connection, now: now)
        }
        if step.ended, connections[connection.token] != nil, connection.stream != nil {
            perform(connection.machine.streamEnded(now: now, closeConnection: step.closesConnection), on: connection, now: now)
        }
    }

    /// The socket took all pending output (a writable event flushed it): a stream asked while backlogged is
    /// asked again, and hands over what it kept meanwhile (for the change feed, the newest state).
    func resumeStream(_ connection: Connection, now: UInt64) {
        guard connection.streamBacklogged, !connection.output.hasPending, connections[connection.token] != nil else { return }
        pollStream(connection, now: now)
    }

    /// Before the drain ends a stream: its goodbye, written like any chunk.
    func sendDrainingChunk(_ connection: Connection, now: UInt64) {
        guard let stream = connection.stream, case .streaming(_, ending: false) = connection.machine.phase else { return }
        let bytes = stream.drainingChunk()
        if !bytes.isEmpty { perform(connection.machine.chunkAvailable(bytes, now: now), on: connection, now: now) }
    }

    /// The connection is done with its stream (ended, drained, closed): the source lets go, once.
    func finishStream(_ connection: Connection) {
        guard let stream = connection.stream else { return }
        connection.stream = nil
        connection.streamDeadline = 0
        connection.streamBacklogged = false
        stream.finish()
    }
}
