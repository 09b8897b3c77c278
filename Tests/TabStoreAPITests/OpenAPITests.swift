import Foundation
import Testing
@testable import TabStoreAPI
@testable import TabStoreApplication
@testable import TabStoreAuth
@testable import TabStoreDomain
@testable import TabStoreHTTP
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport
@testable import TabStore
import TabStoreTestSupport

@Suite("openapi.yaml describes exactly what is served")
struct OpenAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// (method, path) pairs of the `paths:` section, read line by line (two-space path keys, four-space methods).
    static func documentedOperations(_ yaml: String) -> Set<String> {
        var operations = Set<String>()
        var inPaths = false
        var path: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.isEmpty, !line.hasPrefix(" ") { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()); continue }
            for method in ["get", "put", "post", "patch", "delete"] where line == "    \(method):" {
                operations.insert("\(method.uppercased()) \(path ?? "?")")
            }
        }
        return operations
    }

    @Test("the violation codes openapi.yaml lists are exactly ViolationCode's")
    func violationCodes() throws {
        let yaml = try String(contentsOf: Self.root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let lines = yaml.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("enum: [unknown-tab") }
        #expect(lines.count == 1)
        let listed = lines.first.map { line in
            line.split(separator: "[", maxSplits: 1)[1].dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } ?? []
        #expect(listed == ViolationCode.allCases.map(\.rawValue))
    }

    @Test("the problem types openapi.yaml lists are exactly ProblemType's, plus about:blank")
    func problemTypes() throws {
        let yaml = try String(contentsOf: Self.root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let lines = yaml.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("enum: [urn:tabstore:problem:") }
        #expect(lines.count == 1)
        let listed = lines.first.map { line in
            line.split(separator: "[", maxSplits: 1)[1].dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } ?? []
        #expect(listed == ProblemType.allCases.map(\.uri) + ["about:blank"])
    }

    @Test("every route is documented and every documented operation is routed")
    func routesMatch() throws {
        let yaml = try String(contentsOf: Self.root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let directory = TemporaryDirectory()
        let api = APIResponder(store: try SQLiteStore(configuration: .init(path: directory.file("x.sqlite"))), configuration: APIConfiguration())
        let routed = Set(api.router.routes.map { "\($0.method) \($0.pattern)" })
        let documented = Self.documentedOperations(yaml)
        #expect(routed.subtracting(documented).isEmpty, "routed but not documented")
        #expect(documented.subtracting(routed).isEmpty, "documented but not routed")
        #expect(routed.count == 31)
    }

    /// The operations whose block declares a `requestBody`, as "METHOD /path".
    static func operationsWithBody(_ yaml: String) -> Set<String> {
        var found = Set<String>()
        var inPaths = false
        var path: String?
        var operation: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.isEmpty, !line.hasPrefix(" ") { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()); operation = nil; continue }
            for method in ["get", "put", "post", "patch", "delete"] where line == "    \(method):" {
                operation = "\(method.uppercased()) \(path ?? "?")"
            }
            if line == "      requestBody:", let operation { found.insert(operation) }
        }
        return found
    }

    @Test("exactly the operations documented with a requestBody take one (RouteBody.json); every other refuses a body (413)")
    func requestBodiesMatch() throws {
        let yaml = try String(contentsOf: Self.root.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let directory = TemporaryDirectory()
        let api = APIResponder(store: try SQLiteStore(configuration: .init(path: directory.file("x.sqlite"))), configuration: APIConfiguration())
        let taking = Set(api.router.routes.filter { $0.body == .json }.map { "\($0.method) \($0.pattern)" })
        #expect(taking == Self.operationsWithBody(yaml))
        #expect(taking.count == 7)
        // Each operation without a body documents the 413 it answers to one.
        let refusals = yaml.components(separatedBy: "'413': {$ref: '#/components/responses/BodyNotAllowed'}").count - 1
        #expect(refusals == api.router.routes.count - taking.count)
    }

    @Test("the served document is openapi.yaml, byte for byte (embedded by the build from its only copy)")
    func embedded() throws {
        let yaml = try Data(contentsOf: Self.root.appendingPathComponent("openapi.yaml"))
        #expect(SystemRoutes.openAPIBody == Array(yaml))
    }

    @Test("the demo schema is examples/schema.json")
    func demoSchema() throws {
        let file = try String(contentsOf: Self.root.appendingPathComponent("examples/schema.json"), encoding: .utf8)
        #expect(DemoData.schemaJSON + "\n" == file)
        _ = try TabSchema.parse(try JSONParser.parse(Array(file.utf8)))
    }
}
