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
import TabStoreTestSupport

/// Runs the real `tab-server` executable that `swift test` built next to the test bundle.
struct TabServerProcess {
    static var binary: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
        return directory.appendingPathComponent("tab-server")
    }

    /// Headroom for a loaded machine: the database bound (default 5 s) is not what these tests are about.
    static let loadedMachine = ["TAB_SERVER_DATABASE_TIMEOUT": "60"]

    /// Runs a subcommand to completion: (exit status, stdout, stderr).
    static func run(_ arguments: [String], environment: [String: String] = [:], currentDirectory: String? = nil) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = binary
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAB_SERVER_") }
            .merging(TabServerProcess.loadedMachine) { $1 }.merging(environment) { $1 }
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
        let server = try await ServingProcess(["--port", "0", "--data-dir", directory.path, "--threads", "1"])
        let (port, startLog) = (server.port, server.startupLog)
        let token = try String(contentsOfFile: directory.file("admin-token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(startLog.contains("admin_token_generated"))
        #expect(!startLog.contains(token))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("admin-token"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let database = try FileManager.default.attributesOfItem(atPath: directory.file("tabstore.sqlite"))
        #expect((database[.posixPermissions] as? Int) == 0o600)

        let created = try await offPool { () throws -> RawClient.Response? in
            let client = try RawClient(port: port)
            return client.request(.post("/v1/apps").bearer(token).json(#"{"id": "bin.app", "name": "Binary"}"#))
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
        // The server's own threads carry names `top -H` and `ps -L` show (the concurrency pool's are the runtime's).
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.process.processIdentifier)/task")
        let names = Set(try tasks.map { try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(names.isSuperset(of: ["tabstore-loop-0", "tabstore-writer", "tabstore-ckpt"]), "\(names)")

        let (exitStatus, rest) = try await server.stop()  // SIGTERM
        #expect(exitStatus == 0)
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
        // The short forms, also after options and after a subcommand.
        for arguments in [["-h"], ["--port", "0", "-h"], ["token", "-h"]] {
            let (shortStatus, shortHelp, _) = try TabServerProcess.run(arguments)
            #expect(shortStatus == 0, "\(arguments)")
            #expect(shortHelp == help, "\(arguments)")
        }
        let (versionStatus, version, _) = try TabServerProcess.run(["-v"])
        #expect(versionStatus == 0)
        #expect(version == "tab-server \(TabStoreVersion.current)\n")
        #expect(help.contains("-h | --help") && help.contains("-v | --version"))
    }

    @Test("healthcheck that fails says in one line what failed: the refused connection, or the status it got")
    func healthcheckFailures() async throws {
        // Nothing listens on a port that was just closed.
        let closed = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 1)
        let port = closed.port
        closed.close()
        let (status, output, errors) = try TabServerProcess.run(["healthcheck", "--port", String(port)])
        #expect(status == 1)
        #expect(output.isEmpty)
        #expect(errors == "tab-server healthcheck: cannot connect to 127.0.0.1:\(port): Connection refused\n")

        // A server that answers 503.
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 1)
        defer { listener.close() }
        let answered = Locked(false)
        let thread = Thread {
            var poller = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) == 1 else { return }
            let client = accept(listener.fd, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 1024)
            _ = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            let answer = Array("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(client)
            answered.withLock { $0 = true }
        }
        thread.start()
        let (unhealthy, _, message) = try await offPool { try TabServerProcess.run(["healthcheck", "--port", String(listener.port)]) }
        #expect(unhealthy == 1)
        #expect(message == "tab-server healthcheck: GET /healthz on 127.0.0.1:\(listener.port) answered 503\n")
        #expect(answered.withLock { $0 })
    }

    @Test("backup and token refuse a database that does not exist, name it, and create nothing")
    func missingDatabaseRefused() throws {
        let directory = TemporaryDirectory()
        let data = directory.file("data")
        let copy = directory.file("copy.sqlite")
        let cases: [([String], String)] = [
            (["backup", copy, "--data-dir", data], data + "/tabstore.sqlite"),
            (["token", "--app", "com.myApp", "--user", "alice", "--data-dir", data], data + "/tabstore.sqlite"),
            (["backup", copy, "--database", directory.file("other.sqlite")], directory.file("other.sqlite")),
            (["token", "--app", "com.myApp", "--user", "alice"], "./data/tabstore.sqlite"),  // the default, in the working folder
        ]
        for (arguments, path) in cases {
            let (status, output, errors) = try TabServerProcess.run(arguments, currentDirectory: directory.path)
            #expect(status == 2, "\(arguments)")
            #expect(output.isEmpty, "\(arguments)")
            #expect(errors.hasPrefix("tab-server: no database at \(path): pass the server's --data-dir"), "\(arguments): \(errors)")
            #expect(errors.contains("--data-dir"), "\(arguments)")
            #expect(errors.split(separator: "\n").count == 1, "\(arguments): \(errors)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}

extension BinaryTests {
    /// User plus system CPU time of a process so far, in seconds (/proc/<pid>/stat fields 14 and 15).
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let paren = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)" the fields start at field 3 (state): utime is field 14, stime 15.
        let fields = stat[stat.index(after: paren)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test(
        "under a low open-file limit: the connection cap is lowered to fit, a flood past it neither spins nor floods the log, the server serves after"
    )
    func descriptorExhaustion() async throws {
        let directory = TemporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // `ulimit -n` sets the soft and hard limit: the server cannot raise it; 128 descriptors, 26 used at rest.
        process.arguments = ["-c", "ulimit -n 128 && exec \"$0\" serve --port 0 --data-dir \"$1\" --threads 1 --access-log false",
                             TabServerProcess.binary.path, directory.path]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAB_SERVER_") }.merging(TabServerProcess.loadedMachine)
        { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        // Whatever fails below, the server does not outlive the test.
        defer { if process.isRunning { process.terminate() } }
        // Collect the log on a thread of its own so a chatty server never blocks on a full pipe.
        let log = Locked("")
        let reader = err.fileHandleForReading
        let collector = Thread {
            while case let chunk = reader.availableData, !chunk.isEmpty { log.withLock { $0 += String(decoding: chunk, as: UTF8.self) } }
        }
        collector.start()
        let pid = process.processIdentifier
        let port = try await offPool { () throws -> Int in
            var port: Int?
            _ = eventually(10) {
                for line in log.withLock({ $0 }).split(separator: "\n") where line.contains("\"event\":\"listening\"") {
                    if case .object(let object)? = try? JSONParser.parse(Array(line.utf8)), case .integer(let found)? = object["port"] {
                        port = found
                    }
                }
                return port != nil
            }
            guard let port else { throw TestFailure("no listening line: \(log.withLock { $0 })") }
            return port
        }
        let startLog = log.withLock { $0 }
        #expect(startLog.contains("\"event\":\"max_connections_lowered\""))
        #expect(startLog.contains("\"effective\":\(128 - DescriptorLimit.reserve)"))

        let (cpu, refused) = try await offPool { () throws -> (Double, Int) in
            // More connections than descriptors: the old server hit EMFILE here and spun on the readable listener.
            let flood = (0..<150).compactMap { _ in try? RawClient(port: port, timeout: 2) }
            guard flood.count == 150 else { throw TestFailure("connect") }
            // Past the cap of 64: a prompt 503 (a few sampled; a read waits at most 2 s).
            let refused = flood[140...].filter { $0.readResponse()?.status == 503 }.count
            let before = Self.cpuSeconds(pid) ?? 0
            usleep(1_000_000)
            let cpu = (Self.cpuSeconds(pid) ?? 100) - before
            return (cpu, refused)
        }
        #expect(refused == 10)
        #expect(cpu < 0.3)
        // The connections are closed: the server serves again.
        let served = try await offPool { () throws -> Int? in
            var status: Int?
            _ = eventually(30) {
                status = (try? RawClient(port: port, timeout: 2))?.request(.get("/healthz"))?.status
                return status == 200
            }
            return status
        }
        #expect(served == 200)
        process.terminate()
        try await offPool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        let lines = log.withLock { $0 }.split(separator: "\n")
        #expect(lines.filter { $0.contains("accept_failed") }.count <= 3)
    }
}

extension TabServerProcess {
    static var binaryExists: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }
}
