import Foundation
import Testing
@testable import TabStore

/// Runs the real `tab-server` executable that `swift test` built next to the test bundle.
struct TabServerProcess {
    static var binary: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
        return directory.appendingPathComponent("tab-server")
    }

    /// Runs a subcommand to completion: (exit status, stdout, stderr).
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAB_SERVER_") }.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }
}

@Suite("The real tab-server binary", .serialized)
struct BinaryTests {
    @Test("serve on port 0: log says where, requests work, SIGTERM drains and exits 0, no secret in the logs")
    func serveAndStop() async throws {
        let directory = TemporaryDirectory()
        let process = Process()
        process.executableURL = TabServerProcess.binary
        process.arguments = ["serve", "--port", "0", "--data-dir", directory.path, "--threads", "1"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAB_SERVER_") }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let reader = err.fileHandleForReading
        // Read log lines until the "listening" event names the port.
        let (port, startLog) = try await offPool { () throws -> (Int, String) in
            var seen = ""
            while true {
                let chunk = reader.availableData
                guard !chunk.isEmpty else { throw SystemError(call: "server exited early: \(seen)", errno: 0) }
                seen += String(decoding: chunk, as: UTF8.self)
                for line in seen.split(separator: "\n") where line.contains("\"event\":\"listening\"") {
                    if case .object(let object)? = try? JSONParser.parse(Array(line.utf8)), case .integer(let port)? = object["port"] {
                        return (port, seen)
                    }
                }
            }
        }
        let token = try String(contentsOfFile: directory.file("admin-token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(startLog.contains("admin_token_generated"))
        #expect(!startLog.contains(token))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("admin-token"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let database = try FileManager.default.attributesOfItem(atPath: directory.file("tabstore.sqlite"))
        #expect((database[.posixPermissions] as? Int) == 0o600)

        let created = try await offPool { () throws -> RawClient.Response? in
            let client = try RawClient(port: port)
            return client.request("POST", "/v1/apps", headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                                  body: #"{"id": "bin.app", "name": "Binary"}"#)
        }
        #expect(created?.status == 201)
        #expect(TabServerProcess.binaryExists)
        let (status, minted, _) = try TabServerProcess.run(["token", "--app", "bin.app", "--user", "alice", "--data-dir", directory.path])
        #expect(status == 0)
        let claims = try JWT.unverifiedClaims(minted.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(claims.subject == "alice")
        #expect(claims.audience == ["bin.app"])
        let (backupStatus, _, _) = try TabServerProcess.run(["backup", directory.file("copy.sqlite"), "--data-dir", directory.path])
        #expect(backupStatus == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file("copy.sqlite")))
        #expect(try TabServerProcess.run(["healthcheck", "--port", String(port)]).0 == 0)

        process.terminate()  // SIGTERM
        try await offPool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        let rest = String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("shutdown_complete"))
        #expect(rest.contains("\"route\":\"/v1/apps\""))
        #expect(!rest.contains(token) && !rest.contains("signingSecret"))
        #expect(try TabServerProcess.run(["healthcheck", "--port", String(port)]).0 == 1)
    }

    @Test("bad configuration stops start-up with a clear message; --help and --version")
    func configuration() throws {
        let (status, _, errors) = try TabServerProcess.run(["--port", "99999"])
        #expect(status == 2)
        #expect(errors.contains("--port must be an integer from 0 to 65535"))
        let (envStatus, _, envErrors) = try TabServerProcess.run([], environment: ["TAB_SERVER_DURABILITY": "sometimes"])
        #expect(envStatus == 2)
        #expect(envErrors.contains("TAB_SERVER_DURABILITY"))
        let (helpStatus, help, _) = try TabServerProcess.run(["--help"])
        #expect(helpStatus == 0)
        #expect(help.contains("TAB_SERVER_MAX_BODY_BYTES"))
        #expect(try TabServerProcess.run(["--version"]).1.hasPrefix("tab-server "))
    }
}

extension TabServerProcess {
    static var binaryExists: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }
}
