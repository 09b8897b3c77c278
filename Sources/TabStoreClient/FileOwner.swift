import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The exclusive lock a process holds on a queue file while it has it open: `flock(2)` on `<file>.lock` (never
/// the file itself, which every save replaces by a rename, so a lock on it would stay on the old inode). The
/// kernel releases it when the process ends, also when it is killed.
final class FileOwner: Sendable {
    let lockFile: URL
    private let descriptor: Int32

    /// Takes the lock, or throws at once when another process holds it.
    /// - Throws: `OfflineQueueError.lockedByAnotherProcess`, or `.unreadable` when the lock file cannot be opened.
    init(_ file: URL) throws {
        lockFile = URL(fileURLWithPath: file.path + ".lock")
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let fd = open(lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw OfflineQueueError.unreadable(lockFile, "open: errno \(errno)") }
        var result: Int32
        repeat { result = flock(fd, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw OfflineQueueError.lockedByAnotherProcess(file) }
            throw OfflineQueueError.unreadable(lockFile, "flock: errno \(code)")
        }
        descriptor = fd
    }

    deinit {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// The queues this process has open, by file path: a second open of the same file gets the first one's queue
/// (shared by every window of the app), never a second owner that would overwrite the first one's writes.
enum OpenQueues {
    // Guarded by `lock`; entries are weak, so a queue nobody holds closes (and releases its file lock).
    private static let lock = NSLock()
    private struct Entry { weak var queue: OfflineQueue? }
    nonisolated(unsafe) private static var entries: [String: Entry] = [:]

    static func key(_ file: URL) -> String { file.standardizedFileURL.resolvingSymlinksInPath().path }

    /// The open queue for `file`, or the one `make` opens (registered while the lock is held, so two concurrent
    /// opens make one queue).
    static func queue(for file: URL, make: () throws -> OfflineQueue) throws -> OfflineQueue {
        try lock.withLock {
            let key = key(file)
            if let open = entries[key]?.queue { return open }
            // A queue of this process that was just let go may still be in its deinit, holding the lock for a
            // moment: a few short retries tell that from another process, which keeps holding it.
            var attempt = 0
            while true {
                do {
                    let queue = try make()
                    entries[key] = Entry(queue: queue)
                    return queue
                } catch OfflineQueueError.lockedByAnotherProcess where attempt < 10 {
                    attempt += 1
                    usleep(10_000)
                }
            }
        }
    }

    /// Tells the open queues of this server, app, person and schema version what the server just served (by
    /// whichever client of this process asked), so that their kept state is never older than what the app saw.
    static func served(_ customization: Customization, by client: TabStoreClient) async {
        let queues = lock.withLock { entries.values.compactMap(\.queue) }.filter {
            $0.client.appId == client.appId && $0.client.userId == client.userId && $0.client.schemaVersion == client.schemaVersion
                && $0.client.baseURL == client.baseURL
        }
        for queue in queues { await queue.rebase(on: customization) }
    }

    static func remove(_ file: URL) {
        lock.withLock { _ = entries.removeValue(forKey: key(file)) }
    }
}
