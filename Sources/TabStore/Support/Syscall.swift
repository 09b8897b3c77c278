import Glibc

/// A failed system call with its errno.
package struct SystemError: Error, Sendable, CustomStringConvertible {
    package let call: String
    package let errno: Int32

    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    package var description: String { "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Syscall hygiene in one place: `EINTR` is retried, `-1` becomes a typed error.
package enum Syscall {
    @discardableResult
    package static func retrying(_ call: String, _ body: () -> Int) throws(SystemError) -> Int {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(call: call, errno: code)
        }
    }

    /// Like `retrying`, but `EAGAIN` reads as nil (nothing to do now on a non-blocking descriptor).
    package static func nonBlocking(_ call: String, _ body: () -> Int) throws(SystemError) -> Int? {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            throw SystemError(call: call, errno: code)
        }
    }

    package static func close(_ fd: Int32) {
        // close(2) must not be retried on EINTR on Linux: the descriptor is already released.
        _ = Glibc.close(fd)
    }

    /// Ignores SIGPIPE once for the process: a peer that went away is an EPIPE, not a crash.
    package static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }

    package static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
