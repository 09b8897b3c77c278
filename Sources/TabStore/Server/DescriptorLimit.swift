import Foundation
import Glibc

/// The process's open-file limit (RLIMIT_NOFILE) and how many connections fit in it.
enum DescriptorLimit {
    /// Descriptors kept for everything that is not a client connection: the database (a writer and readers,
    /// each with its file, WAL and shared memory), the listener, epoll and eventfd per loop, standard streams.
    static let reserve = 64

    /// Raises the soft limit to the hard one (the default soft limit, often 1024, is far below the connection
    /// cap); returns the soft limit in force afterwards, nil when it cannot be read.
    static func raiseSoftLimit() -> Int? {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        var target = limit.rlim_max
        if target == rlim_t.max {
            // "Unlimited" is not accepted for descriptors: the kernel's ceiling is fs.nr_open.
            target = (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8))
                .flatMap { rlim_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? limit.rlim_cur
        }
        if target > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// The connection cap that leaves `reserve` descriptors free under `softLimit` (at least 1).
    static func connectionsThatFit(requested: Int, softLimit: Int, reserve: Int = reserve) -> Int {
        min(requested, max(1, softLimit - reserve))
    }
}
