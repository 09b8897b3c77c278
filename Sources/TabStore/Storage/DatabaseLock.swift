import Glibc
import TabStoreStore
import TabStoreSupport

/// One serving process per database: an exclusive `flock(2)` on the database file itself, held until
/// `release` (in practice for the process lifetime; the kernel drops it when the process dies, even on
/// SIGKILL, so a crash never leaves a stale lock behind).
///
/// SQLite's own locking already keeps two processes from corrupting the file; this lock exists because
/// two servers on one file would each keep their own caches and counters (apps, tokens, the customization
/// gauge) and answer from stale state. Locking the file's inode (not a lock file named after its path)
/// means a symlink or a hard link to the same database is the same database. `flock` locks belong to the
/// open file description, so a second open in the same process conflicts too, and they are independent of
/// the `fcntl` record locks SQLite takes on the same file.
///
/// Closing any descriptor of a file drops every `fcntl` lock the process holds on it
/// (https://www.sqlite.org/howtocorrupt.html §2.2), so `release` must come after the store is closed:
/// `TabStoreService` closes the store first on every path.
package final class DatabaseLock: Sendable {
    package let path: String
    /// The descriptor, -1 once released.
    private let fd: Locked<Int32>

    /// Creates the database file (owner-only) when missing and takes the lock without waiting.
    /// - Throws: `ConfigurationError` naming the database when another process holds it or it cannot be opened.
    package init(databasePath: String) throws {
        let path = databasePath
        let fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, mode_t(0o600))  // read-only is enough for flock
        guard fd >= 0 else {
            throw ConfigurationError(description: "cannot open the database \(path): \(String(cString: strerror(errno)))")
        }
        var result: Int32
        repeat { result = flock(fd, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            if code == EWOULDBLOCK {
                throw ConfigurationError(
                    description:
                        "another tab-server is already serving \(databasePath) (it holds a lock on the database file, also through links); stop it first or use another --data-dir/--database"
                )
            }
            throw ConfigurationError(description: "cannot lock \(path): \(String(cString: strerror(code)))")
        }
        self.path = path
        self.fd = Locked(fd)
    }

    /// Drops the lock (closing the descriptor releases it). Only after the store is closed (see above).
    package func release() {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
