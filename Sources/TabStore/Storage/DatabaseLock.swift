import Glibc

/// One serving process per database: an exclusive `flock(2)` on `<database>.lock`, held until `release`
/// (in practice for the process lifetime; the kernel drops it when the process dies, even on SIGKILL,
/// so a crash never leaves a stale lock behind).
///
/// SQLite's own locking already keeps two processes from corrupting the file; this lock exists because
/// two servers on one file would each keep their own caches and counters (apps, tokens, the customization
/// gauge) and answer from stale state. `flock` locks belong to the open file description, so a second
/// open in the same process conflicts too (unlike `fcntl` record locks). The file is left in place on exit:
/// unlinking it would let a third process lock a fresh inode while a second still holds the old one.
public final class DatabaseLock: Sendable {
    public let path: String
    /// The descriptor, -1 once released.
    private let fd: Locked<Int32>

    /// Takes the lock without waiting.
    /// - Throws: `ServiceOptions.Invalid` naming the lock file when another process holds it or it cannot be opened.
    public init(databasePath: String) throws {
        let path = databasePath + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
        guard fd >= 0 else {
            throw ServiceOptions.Invalid(description: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        var result: Int32
        repeat { result = flock(fd, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            if code == EWOULDBLOCK {
                throw ServiceOptions.Invalid(description: "another tab-server is already serving \(databasePath) (it holds the lock \(path)); stop it first or use another --data-dir/--database")
            }
            throw ServiceOptions.Invalid(description: "cannot lock \(path): \(String(cString: strerror(code)))")
        }
        self.path = path
        self.fd = Locked(fd)
    }

    /// Drops the lock (closing the descriptor releases it).
    public func release() {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
