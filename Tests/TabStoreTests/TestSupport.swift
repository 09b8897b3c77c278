import Foundation
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

/// A fresh temporary folder per test, removed when the value is released.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL
    var path: String { url.path }

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tabstore-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A test's own failure, said in words (not an errno a helper never had).
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
