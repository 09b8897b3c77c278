import Glibc

/// SIGTERM and SIGINT, turned into bytes on a pipe by a handler installed as the program's first statement
/// (the self-pipe pattern), and read one signal per `wait()`: `serve` waits once to start draining, then
/// once more, during the drain, to exit at once on a second signal (`Commands.serve`).
///
/// A handler that only writes one byte is async-signal-safe and works whichever thread the kernel picks;
/// installed before anything else runs, it cannot miss a signal sent at any later moment, even one sent
/// while the server is still starting (that one stays in the pipe until `wait()` reads it). A dispatch
/// source installed after start-up lost a signal sent between the `listening` line and its registration.
enum ShutdownSignals {
    /// The pipe's write end; set once in `install()` before the handler exists, then only read by it.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private static var readEnd: Int32 = -1

    /// Creates the pipe and installs the handler for both signals.
    static func install() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }  // without a pipe the default action (exit) remains
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        writeEnd = ends[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = Glibc.write(ShutdownSignals.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGINT, &action, nil)
    }

    /// Gives both signals their default action back (commands other than `serve`: Ctrl-C stops them at once).
    static func restoreDefaults() {
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
    }

    /// Blocks until SIGTERM or SIGINT arrived (at once when one already did); returns its number.
    static func wait() -> Int32 {
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(readEnd, &byte, 1)
            if count == 1 { return Int32(byte) }
            if count < 0, errno == EINTR { continue }
            return SIGTERM  // the pipe is gone: treat it as a request to stop
        }
    }
}
