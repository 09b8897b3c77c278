import Foundation
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

@Suite("Read pool: waiting readers suspend, are all served, and close waits for them")
struct ReadPoolTests {
    @Test("with one connection, 64 concurrent reads are all served; readNow declines while it is in use")
    func waitersAreServed() async throws {
        let directory = TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.file("pool.sqlite"))
        let pool = ReadPool(connections: [connection])
        let busy = try await pool.read { db in
            // While the only connection is checked out, an event-loop read declines instead of waiting.
            (try pool.readNow { _ in 1 }) == nil
        }
        #expect(busy)
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask { try await pool.read { db in (try db.scalarInt("SELECT ?", [.integer(index)]) ?? -1) } }
            }
            var seen: [Int] = []
            for try await value in group { seen.append(value) }
            return seen.sorted()
        }
        #expect(results == Array(0..<64))
        #expect(try pool.readNow { _ in 7 } == 7)
        await pool.close()
        await #expect(throws: StorageError.self) { try await pool.read { _ in 0 } }
        #expect(try pool.readNow { _ in 1 } == nil)
    }
}

@Suite("Route parameters")
struct RouteParameterTests {
    @Test("require returns a declared parameter and throws for a name the pattern lacks (never an empty id)")
    func require() throws {
        let context = RouteContext(parameters: ["appId": "com.myApp"], requestId: "r", pattern: "/v1/apps/{appId}")
        #expect(try context.require("appId") == "com.myApp")
        #expect(throws: MissingRouteParameter.self) { try context.require("appid") }
    }
}
