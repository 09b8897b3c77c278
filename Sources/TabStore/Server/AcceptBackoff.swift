import Glibc

/// What the loops do when accept(2) fails, as a pure value with an injected clock (monotonic nanoseconds).
///
/// Out of descriptors (EMFILE, ENFILE) or kernel memory, the pending connection stays in the backlog and the
/// listener stays readable: returning to epoll at once would spin a core and write a log line per wake-up.
/// Instead every loop stops watching the listener for `pause` and re-arms it afterwards; a connection that
/// waits meanwhile is accepted once descriptors are free (or the client gives up). Chosen over keeping a
/// spare descriptor to accept-and-503 with: the connection cap is already lowered to fit the descriptor
/// limit at start, so this only guards against descriptors used elsewhere (database, logs), where a spare
/// one would be taken by the next open(2) anyway. The warning is logged at most once per `logInterval`,
/// with the number of failures not logged since the previous line. Shared by all loops: the limit is per process.
struct AcceptBackoff: Sendable {
    struct Decision: Equatable, Sendable {
        /// Stop watching the listener until `resumeAt`.
        var pause: Bool
        /// Write the warning now.
        var log: Bool
        /// Failures not logged since the previous warning line.
        var suppressed: Int
    }

    static let pause: UInt64 = 100_000_000
    static let logInterval: UInt64 = 1_000_000_000

    /// The listener is not watched before this instant; 0 when no pause was ever needed.
    private(set) var resumeAt: UInt64 = 0
    private var lastLogAt: UInt64?
    private var suppressed = 0

    /// Records a failed accept(2) with `code` (errno) at `now`.
    mutating func failed(errno code: Int32, now: UInt64) -> Decision {
        // These concern one connection that is already gone (RFC 793 reset before accept, a firewall's
        // verdict): the next pending connection may be fine, so keep accepting.
        let pause = !(code == ECONNABORTED || code == EPROTO || code == EPERM)
        if pause { resumeAt = max(resumeAt, now + Self.pause) }
        if let lastLogAt, now &- lastLogAt < Self.logInterval {
            suppressed += 1
            return Decision(pause: pause, log: false, suppressed: 0)
        }
        lastLogAt = now
        defer { suppressed = 0 }
        return Decision(pause: pause, log: true, suppressed: suppressed)
    }

    /// Whether the listener may be watched again at `now`.
    func mayResume(now: UInt64) -> Bool { now >= resumeAt }

    /// Milliseconds (rounded up, at most `cap`) until the listener may be watched again: an epoll_wait timeout.
    func millisecondsToResume(now: UInt64, cap: Int32) -> Int32 {
        guard now < resumeAt else { return 0 }
        return Int32(min(UInt64(cap), (resumeAt - now + 999_999) / 1_000_000))
    }
}
