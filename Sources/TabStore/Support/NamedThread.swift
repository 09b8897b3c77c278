import Foundation
import Glibc

/// A thread of the server's own (an event loop, the storage writer, the checkpointer) under a name the system
/// shows: `top -H`, `ps -L` and `/proc/PID/task/*/comm` list it. Foundation's `Thread.name` stays inside the
/// process on Linux, where a new thread otherwise shows the name of the one that made it ("…default-qos").
package enum NamedThread {
    /// The kernel keeps this many bytes of a thread's name.
    static let maxNameBytes = 15

    /// Starts `body` on a new thread named `name` (cut to 15 bytes).
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrent(name)
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Names the calling thread (through `/proc/thread-self/comm`, as `pthread_setname_np` does; that call is
    /// not visible to Swift without `_GNU_SOURCE`). A system without it keeps the inherited name.
    package static func nameCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(maxNameBytes))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
