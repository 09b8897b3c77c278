import Foundation
import Testing
@testable import TabStore
@testable import TabStoreSupport
import TabStoreTestSupport

@Suite("Service options: flags, environment, defaults")
struct ServiceOptionsTests {
    @Test("configuration: flags win over the environment, bad values are refused with the name")
    func options() throws {
        let (options, rest) = try ServiceOptions.parse(
            ["--port=9000", "token", "--app", "x"], environment: ["TAB_SERVER_PORT": "8000", "TAB_SERVER_THREADS": "3"])
        #expect(options.port == 9000)
        #expect(options.threads == 3)
        #expect(rest == ["token", "--app", "x"])
        #expect(throws: ServiceOptions.Invalid.self) { try ServiceOptions.parse(["--threads", "0"], environment: [:]) }
        #expect(throws: ServiceOptions.Invalid.self) { try ServiceOptions.parse(["--port"], environment: [:]) }
        #expect(throws: ServiceOptions.Invalid.self) { try ServiceOptions.parse([], environment: ["TAB_SERVER_LOG_LEVEL": "chatty"]) }
    }

    @Test("configuration: a postgres:// database URL selects PostgreSQL; anything else is refused, an empty one is unset")
    func databaseURLOption() throws {
        let url = "postgres://tabstore@db/tabstore"
        #expect(try ServiceOptions.parse([], environment: ["TAB_SERVER_DATABASE_URL": url]).0.databaseURL == url)
        #expect(try ServiceOptions.parse(["--database-url", "postgresql://h/d"], environment: [:]).0.databaseURL == "postgresql://h/d")
        #expect(throws: ServiceOptions.Invalid.self) {
            try ServiceOptions.parse([], environment: ["TAB_SERVER_DATABASE_URL": "mysql://tabstore@db/tabstore"])
        }
        #expect(try ServiceOptions.parse([], environment: ["TAB_SERVER_DATABASE_URL": ""]).0.databaseURL == nil)
    }

    @Test("configuration: the body bytes in flight, 64 MiB by default, never below the body limit")
    func bodyBytesInFlightOption() throws {
        #expect(try ServiceOptions.parse([], environment: [:]).0.maxBodyBytesInFlight == 67_108_864)
        let (options, _) = try ServiceOptions.parse(
            ["--max-body-bytes-in-flight", "2097152"], environment: ["TAB_SERVER_MAX_BODY_BYTES_IN_FLIGHT": "1048576"])
        #expect(options.maxBodyBytesInFlight == 2_097_152)
        #expect(try ServiceOptions.parse([], environment: ["TAB_SERVER_MAX_BODY_BYTES_IN_FLIGHT": "1048576"]).0.maxBodyBytesInFlight == 1_048_576)
        #expect(throws: ServiceOptions.Invalid.self) { try ServiceOptions.parse(["--max-body-bytes-in-flight", "1048575"], environment: [:]) }
        #expect(throws: ServiceOptions.Invalid.self) {
            try ServiceOptions.parse(["--max-body-bytes", "4096", "--max-body-bytes-in-flight", "2048"], environment: [:])
        }
        #expect(ServiceOptions.helpText.contains("TAB_SERVER_MAX_BODY_BYTES_IN_FLIGHT"))
    }
}
