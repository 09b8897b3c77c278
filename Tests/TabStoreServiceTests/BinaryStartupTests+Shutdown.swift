import Foundation
import Glibc
import Testing
@testable import TabStore
@testable import TabStoreSupport
import TabStoreTestSupport

extension BinaryStartupTests {
    @Test("a second SIGTERM or SIGINT during the drain exits at once, non-zero (128 + the signal), with a shutdown_forced line")
    func secondSignalForcesExit() async throws {
        let directory = TemporaryDirectory()
        for signal in [SIGTERM, SIGINT] {
            let server = try await ServingProcess(["--port", "0", "--data-dir", directory.path, "--threads", "1",
                                                   "--shutdown-grace", "60", "--header-timeout", "60"])
            // A request partly received keeps the drain going (until the header timeout or the grace period).
            let partial = try RawClient(port: server.port)
            partial.send("GET /healthz HTTP/1.1\r\n")
            usleep(100_000)
            kill(server.process.processIdentifier, SIGTERM)
            #expect(try await server.waitForLog("shutdown_started"), "signal \(signal)")
            let started = Date()
            kill(server.process.processIdentifier, signal)
            #expect(try await server.waitForExit(within: 5), "signal \(signal): still draining after a second signal")
            #expect(Date().timeIntervalSince(started) < 5)
            #expect(server.process.terminationStatus == 128 + signal, "signal \(signal)")
            let log = server.remainingLog()
            #expect(log.contains("shutdown_forced"), "signal \(signal): \(log)")
            #expect(!log.contains("shutdown_complete"), "signal \(signal)")
            withExtendedLifetime(partial) {}
        }
    }
}
