import Glibc
import Testing
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

@Suite("Accept backoff and the descriptor limit")
struct AcceptBackoffTests {
    let ms: UInt64 = 1_000_000

    @Test("out of descriptors: pause 100 ms, then resume; the epoll timeout says when")
    func pauseAndResume() {
        var backoff = AcceptBackoff()
        #expect(backoff.mayResume(now: 5 * ms))
        let first = backoff.failed(errno: EMFILE, now: 10 * ms)
        #expect(first == AcceptBackoff.Decision(pause: true, log: true, suppressed: 0))
        #expect(!backoff.mayResume(now: 10 * ms))
        #expect(!backoff.mayResume(now: 109 * ms))
        #expect(backoff.millisecondsToResume(now: 60 * ms, cap: 200) == 50)
        #expect(backoff.millisecondsToResume(now: 60 * ms + 1, cap: 200) == 50)  // rounded up, never a 0 ms busy wait
        #expect(backoff.millisecondsToResume(now: 60 * ms, cap: 20) == 20)
        #expect(backoff.mayResume(now: 110 * ms))
        #expect(backoff.millisecondsToResume(now: 110 * ms, cap: 200) == 0)
        #expect(backoff.failed(errno: ENFILE, now: 120 * ms).pause)
        #expect(backoff.failed(errno: ENOBUFS, now: 121 * ms).pause)
        #expect(!backoff.mayResume(now: 220 * ms))
    }

    @Test("a failure that concerns one connection does not pause accepting")
    func perConnectionFailure() {
        var backoff = AcceptBackoff()
        #expect(!backoff.failed(errno: ECONNABORTED, now: 10 * ms).pause)
        #expect(backoff.mayResume(now: 10 * ms))
    }

    @Test("the warning: at most one line per second, with the count of failures it did not log")
    func rateLimitedLog() {
        var backoff = AcceptBackoff()
        #expect(backoff.failed(errno: EMFILE, now: 0).log)
        for step in 1...99 { #expect(!backoff.failed(errno: EMFILE, now: UInt64(step) * 10 * ms).log) }
        let next = backoff.failed(errno: EMFILE, now: 1_000 * ms)
        #expect(next.log)
        #expect(next.suppressed == 99)
        #expect(backoff.failed(errno: EMFILE, now: 3_000 * ms) == AcceptBackoff.Decision(pause: true, log: true, suppressed: 0))
    }

    @Test("a loop that only accepts when allowed makes about ten attempts and at most one log line per second of exhaustion")
    func noHotLoop() {
        // The listener stays readable and accept keeps failing with EMFILE; epoll would report it on every wait.
        var backoff = AcceptBackoff()
        var now: UInt64 = 0
        var attempts = 0
        var lines = 0
        while now < 1_000 * ms {
            if backoff.mayResume(now: now) {
                attempts += 1
                if backoff.failed(errno: EMFILE, now: now).log { lines += 1 }
            }
            now += max(ms / 10, UInt64(backoff.millisecondsToResume(now: now, cap: 200)) * ms)
        }
        #expect(attempts <= 11)
        #expect(lines <= 1)
    }

    @Test("the connection cap fits under the open-file limit with a reserve; the soft limit is raised, never lowered")
    func descriptorLimit() {
        #expect(DescriptorLimit.connectionsThatFit(requested: 16_384, softLimit: 1024) == 1024 - DescriptorLimit.reserve)
        #expect(DescriptorLimit.connectionsThatFit(requested: 100, softLimit: 1_048_576) == 100)
        #expect(DescriptorLimit.connectionsThatFit(requested: 100, softLimit: 10) == 1)
        var before = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &before) == 0)
        let soft = DescriptorLimit.raiseSoftLimit()
        #expect(soft != nil)
        #expect(UInt(soft ?? 0) >= before.rlim_cur)
    }
}
