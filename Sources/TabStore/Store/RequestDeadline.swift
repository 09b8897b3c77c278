import Dispatch

/// One bound for all the database work of a request, not one per call: the API sets when the request arrived
/// (a task-local value, so every call the handler makes sees it), and a backend ends whatever is left of its
/// work (waiting for a connection, connecting, each statement) at that instant plus its bound. A request that
/// waits for a connection, then runs three statements, still answers within about one bound.
///
/// Work outside a request (a republication, a sweep) has no arrival time: each call gets the whole bound.
package enum RequestDeadline {
    /// When the request being served arrived (monotonic nanoseconds, `DispatchTime.uptimeNanoseconds`).
    @TaskLocal package static var arrivedAt: UInt64?

    /// The instant (monotonic nanoseconds) by which work bounded by `seconds` must end: the request's arrival
    /// plus `seconds`, or now plus `seconds` outside a request. Never traps, whatever `seconds` is.
    package static func deadline(bound seconds: Double) -> UInt64 {
        let start = arrivedAt ?? DispatchTime.now().uptimeNanoseconds
        let span = seconds.isFinite && seconds > 0 ? UInt64(min(seconds, 86_400) * 1e9) : 0
        return start &+ span < start ? UInt64.max : start &+ span
    }

    /// Seconds left until `deadline` (0 when it passed).
    package static func remaining(until deadline: UInt64) -> Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return deadline > now ? Double(deadline - now) / 1e9 : 0
    }
}
