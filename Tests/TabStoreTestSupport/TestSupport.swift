import Glibc
import Foundation
@testable import TabStore
@testable import TabStoreAPI
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreServer
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

/// A fresh temporary folder per test, removed when the value is released.
package final class TemporaryDirectory: @unchecked Sendable {
    package let url: URL
    package var path: String { url.path }

    package init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    package func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A test's own failure, said in words (not an errno a helper never had).
package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Whether `condition` holds within `seconds`, polled every 10 ms: a positive wait, which returns as soon as it
/// holds, so its bound is generous (a loaded machine, the sanitizers) and never what a test measures. Blocks its
/// thread: for code already off the pool (`offPool`); async tests use the overload that sleeps instead.
package func eventually(_ seconds: Double = 60, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// The same wait from an async test: it sleeps between polls, so tests waiting side by side never hold the
/// cooperative pool's few threads (on a 2-core machine, two blocked waits would stall every other test's tasks).
package func eventually(_ seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A small seeded generator (SplitMix64), so a failure replays exactly.
package struct SeededGenerator: RandomNumberGenerator {
    package var state: UInt64

    package init(state: UInt64) { self.state = state }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Polls `condition` every 10 ms until it holds, for up to 60 seconds (a positive wait: generous for a loaded machine).
/// - Throws: `TestFailure` when it never holds.
package func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    guard await eventually(60, condition) else { throw TestFailure("waitUntil: the condition never held") }
}
