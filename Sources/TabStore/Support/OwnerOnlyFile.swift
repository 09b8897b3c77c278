import Glibc

/// Files that hold secrets (the admin token, database backups), created owner-only from their first byte.
///
/// `open(2)` with `O_CREAT | O_EXCL` and mode 0600 creates the file with at most 0600 whatever the
/// umask (the umask only removes bits), so no other user can open it between creation and a later
/// `chmod`; `O_EXCL` also refuses an existing file, and `O_NOFOLLOW` refuses a symlink planted at the path.
package enum OwnerOnlyFile {
    /// Creates `path` exclusively with mode 0600 and returns the open descriptor (write-only, close-on-exec).
    /// - Throws: `SystemError` (errno `EEXIST` when something is already at `path`, `ELOOP` for a symlink).
    package static func create(_ path: String) throws(SystemError) -> Int32 {
        let fd = Int32(try Syscall.retrying("open(\(path))") {
            Int(open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600)))
        })
        return fd
    }

    /// Creates `path` exclusively with mode 0600, writes `bytes`, flushes them to disk and closes it.
    /// A failed write removes the partial file.
    /// - Throws: `SystemError`.
    package static func write(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
        let fd = try create(path)
        do throws(SystemError) {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw SystemError(call: "write(\(path))", errno: errno)
                }
                offset += written
            }
            try Syscall.retrying("fsync(\(path))") { Int(fsync(fd)) }
        } catch {
            Syscall.close(fd)
            unlink(path)
            throw error
        }
        Syscall.close(fd)
    }
}
