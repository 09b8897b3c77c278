import Foundation
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
import TabStoreTestSupport

/// A `tab-server serve` running in the background until `stop`.
final class ServingProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    /// What the server logged up to its `listening` line.
    let startupLog: String
    private let reader: FileHandle

    /// Starts `serve` with `arguments` and waits for its `listening` line.
    init(_ arguments: [String], shell prefix: String = "") async throws {
        let process = self.process
        if prefix.isEmpty {
            process.executableURL = TabServerProcess.binary
            process.arguments = ["serve"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", prefix + #" exec "$0" serve "$@""#, TabServerProcess.binary.path] + arguments
        }
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAB_SERVER_") }.merging(TabServerProcess.loadedMachine)
        { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let reader = err.fileHandleForReading
        self.reader = reader
        (port, startupLog) = try await offPool { () throws -> (Int, String) in
            var seen = ""
            while true {
                let chunk = reader.availableData
                guard !chunk.isEmpty else { throw TestFailure("server exited early: \(seen)") }
                seen += String(decoding: chunk, as: UTF8.self)
                for line in seen.split(separator: "\n") where line.contains("\"event\":\"listening\"") {
                    if case .object(let object)? = try? JSONParser.parse(Array(line.utf8)), case .integer(let port)? = object["port"] {
                        return (port, seen)
                    }
                }
            }
        }
    }

    /// Reads the log after the `listening` line until `text` appears; false when the log ends first.
    func waitForLog(_ text: String) async throws -> Bool {
        let reader = self.reader
        return try await offPool {
            var seen = ""
            while !seen.contains(text) {
                let chunk = reader.availableData
                if chunk.isEmpty { return false }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            return true
        }
    }

    /// Waits up to `seconds` for the process to exit; kills it (SIGKILL) when it has not, and says so.
    func waitForExit(within seconds: Double) async throws -> Bool {
        let process = self.process
        return try await offPool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return false
            }
            return true
        }
    }

    /// The rest of the log, once the process exited.
    func remainingLog() -> String { String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) }

    /// SIGTERM, then waits for the exit.
    /// - Returns: the exit status and what the server logged after its `listening` line.
    @discardableResult
    func stop() async throws -> (status: Int32, log: String) {
        process.terminate()
        let process = self.process
        try await offPool { process.waitUntilExit() }
        return (process.terminationStatus, String(decoding: reader.readDataToEndOfFile(), as: UTF8.self))
    }
}

func mode(_ path: String) throws -> Int {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw SystemError(call: "lstat(\(path))", errno: errno) }
    return Int(info.st_mode) & 0o777
}

@Suite("Start-up, files and locks of the real binary", .serialized)
struct BinaryStartupTests {
    @Test("under umask 0 the generated admin token and a backup are created 0600; a backup never overwrites or follows a symlink")
    func secretsAreOwnerOnly() async throws {
        let directory = TemporaryDirectory()
        let data = directory.file("data")
        let server = try await ServingProcess(["--port", "0", "--data-dir", data, "--threads", "1"], shell: "umask 0;")
        #expect(try mode(data + "/admin-token") == 0o600)
        #expect(try mode(data + "/tabstore.sqlite") == 0o600)

        let copy = directory.file("copy.sqlite")
        let umask0 = ["/bin/sh", "-c", #"umask 0; exec "$0" "$@""#, TabServerProcess.binary.path]
        func backup(_ path: String) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: umask0[0])
            process.arguments = Array(umask0.dropFirst()) + ["backup", path, "--data-dir", data]
            let err = Pipe()
            process.standardError = err
            process.standardOutput = Pipe()
            try process.run()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: errors, as: UTF8.self))
        }
        #expect(try backup(copy).0 == 0)
        #expect(try mode(copy) == 0o600)
        let reopened = try SQLiteConnection(path: copy)
        #expect(try reopened.scalarInt("SELECT count(*) FROM tabstore_migrations") == Migrations.latestVersion)

        // An existing file is refused, not overwritten.
        let (again, message) = try backup(copy)
        #expect(again != 0)
        #expect(message.contains("already exists"))
        // A symlink planted at the path is refused, and its target is left alone.
        let target = directory.file("target")
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        let link = directory.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try backup(link).0 != 0)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.contains(".partial-") })
        try await server.stop()
    }

    @Test("a token file others can read is used, and the log says so; an owner-only one is not mentioned")
    func sharedTokenFileIsLogged() async throws {
        let directory = TemporaryDirectory()
        let token = directory.file("token")
        #expect(FileManager.default.createFile(atPath: token, contents: Data("a-token-of-enough-bytes".utf8), attributes: [.posixPermissions: 0o644]))
        let shared = try await ServingProcess(["--port", "0", "--data-dir", directory.file("a"), "--admin-token-file", token, "--threads", "1"])
        #expect(shared.startupLog.contains("admin_token_file_shared"))
        try await shared.stop()
        #expect(chmod(token, 0o600) == 0)
        let owned = try await ServingProcess(["--port", "0", "--data-dir", directory.file("b"), "--admin-token-file", token, "--threads", "1"])
        #expect(!owned.startupLog.contains("admin_token_file_shared"))
        try await owned.stop()
    }

    @Test("SIGTERM right after the listening line still drains and exits 0 (the signal is never lost)")
    func immediateStop() async throws {
        let directory = TemporaryDirectory()
        for round in 0..<5 {
            let server = try await ServingProcess(["--port", "0", "--data-dir", directory.path, "--threads", "1"])
            let (status, log) = try await server.stop()
            #expect(status == 0, "round \(round)")
            #expect(log.contains("shutdown_complete"), "round \(round)")
        }
    }

    @Test("a second server on the same database (also through a symlink or a hard link) exits non-zero; the first keeps serving")
    func secondServerRefused() async throws {
        let directory = TemporaryDirectory()
        let first = try await ServingProcess(["--port", "0", "--data-dir", directory.path, "--threads", "1"])
        let (status, _, errors) = try TabServerProcess.run(["serve", "--port", "0", "--data-dir", directory.path, "--threads", "1"])
        #expect(status != 0)
        #expect(errors.contains(directory.file("tabstore.sqlite")))
        #expect(errors.contains("already serving"))
        // The same file under other names is the same database.
        let elsewhere = TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: elsewhere.file("symlink.sqlite"), withDestinationPath: directory.file("tabstore.sqlite"))
        #expect(link(directory.file("tabstore.sqlite"), elsewhere.file("hard.sqlite")) == 0)
        for name in ["symlink.sqlite", "hard.sqlite"] {
            let (linked, _, message) = try TabServerProcess.run(["serve", "--port", "0", "--data-dir", elsewhere.file("data-" + name),
                                                                 "--database", elsewhere.file(name), "--threads", "1"])
            #expect(linked != 0, "\(name)")
            #expect(message.contains("already serving"), "\(name)")
        }
        #expect(try TabServerProcess.run(["healthcheck", "--port", String(first.port)]).0 == 0)
        try await first.stop()
        // The lock dies with its process: a new server starts on the same folder.
        let next = try await ServingProcess(["--port", "0", "--data-dir", directory.path, "--threads", "1"])
        try await next.stop()
    }

    @Test("a busy port, a bad host or a short token stop start-up before any file or folder is created")
    func nothingCreatedOnBadConfiguration() async throws {
        let directory = TemporaryDirectory()
        let busy = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 1)
        defer { busy.close() }
        let data = directory.file("data")
        let cases: [([String], String)] = [
            (["--port", String(busy.port)], "cannot listen"),
            (["--host", "999.1.2.3", "--port", "0"], "--host must be an IPv4 or IPv6 address"),
            (["--port", "0", "--admin-token", "short"], "at least 16 bytes"),
            (["--port", "0", "--admin-token-file", directory.file("missing-token")], "cannot read the admin token file"),
        ]
        for (arguments, message) in cases {
            let (status, _, errors) = try TabServerProcess.run(["serve", "--data-dir", data] + arguments)
            #expect(status != 0, "\(arguments)")
            #expect(errors.contains(message), "\(arguments): \(errors)")
            #expect(!FileManager.default.fileExists(atPath: data), "\(arguments) left \(data) behind")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// Tests run as root, and root ignores permission bits (a chmod 0444 file is still writable for it).
    /// So the binary runs as the unprivileged user `nobody` through util-linux `setpriv`, for which a
    /// root-owned 0444 file really is read-only; without root it runs as the current user.
    @Test("a read-only database file stops start-up with a clear message")
    func readOnlyDatabaseRefused() async throws {
        let directory = TemporaryDirectory()
        let database = directory.file("tabstore.sqlite")
        let store = try SQLiteStore(configuration: SQLiteStore.Configuration(path: database))
        await store.close()
        #expect(chmod(database, 0o444) == 0)
        #expect(chmod(directory.path, 0o777) == 0)  // the -wal/-shm and lock files may be created: only the file is read-only
        let arguments = ["serve", "--port", "0", "--data-dir", directory.path, "--admin-token", "an-operator-token-0123456789", "--threads", "1"]
        // The old binary started and served here: `runUnprivileged` stops it after 5 s and records that.
        let (status, errors, _) = try await Self.runUnprivileged(arguments)
        #expect(status != 0)
        #expect(errors.contains("cannot write to the database \(database)"), "\(errors)")
        #expect(errors.contains("readonly") || errors.contains("read-only"), "\(errors)")
    }

    /// Runs the binary to completion within 5 seconds (a server that starts by mistake is stopped), as the
    /// unprivileged `nobody` when the tests run as root (root ignores permission bits).
    /// - Returns: the exit status, standard error, and the uid the binary ran as.
    static func runUnprivileged(_ arguments: [String]) async throws -> (status: Int32, errors: String, uid: UInt32) {
        let process = Process()
        var uid = getuid()
        if uid == 0 {
            let setpriv = "/usr/bin/setpriv"
            try #require(FileManager.default.isExecutableFile(atPath: setpriv), "needs util-linux setpriv to drop root")
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", TabServerProcess.binary.path] + arguments
            uid = 65534
        } else {
            process.executableURL = TabServerProcess.binary
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TAB_SERVER_") }.merging(TabServerProcess.loadedMachine)
        { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let finished = try await offPool { () -> Bool in
            for _ in 0..<100 where process.isRunning { usleep(50_000) }
            return !process.isRunning
        }
        if !finished { process.terminate() }
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(finished, "\(arguments) did not stop: \(errors)")
        return (process.terminationStatus, errors, uid)
    }

    @Test("a --data-dir that is a file or a bad --host stops start-up with one plain line, exit 2")
    func plainStartupErrors() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("file")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("not a folder".utf8)))
        let cases: [([String], String)] = [
            (["--data-dir", file], "tab-server: --data-dir \(file) is a file, not a folder\n"),
            (["--data-dir", file + "/sub"], "tab-server: --data-dir \(file)/sub cannot be created: \(file) is a file, not a folder\n"),
            (["--database", file + "/db.sqlite"], "tab-server: the folder of --database \(file) is a file, not a folder\n"),
            (
                ["--host", "999.1.2.3"],
                "tab-server: --host must be an IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0 or ::, or localhost, got \"999.1.2.3\"\n"
            ),
            (
                ["--host", "example.com"],
                "tab-server: --host must be an IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0 or ::, or localhost, got \"example.com\"\n"
            ),
        ]
        for (arguments, message) in cases {
            for command in ["serve", "demo", "backup"] {
                let extra = command == "backup" ? [directory.file("copy.sqlite")] : []
                let (status, _, errors) = try TabServerProcess.run([command] + extra + ["--port", "0", "--threads", "1"] + arguments,
                                                                    currentDirectory: directory.path)
                #expect(status == 2, "\(command) \(arguments)")
                // backup never creates a folder: it says the database is missing instead.
                if command == "backup", arguments[0] != "--host" {
                    #expect(errors.hasPrefix("tab-server: no database at \(file)/") && errors.split(separator: "\n").count == 1, "\(errors)")
                } else {
                    #expect(errors == message, "\(command) \(arguments)")
                }
                #expect(!errors.contains("Error Domain") && !errors.contains("errno"), "\(errors)")
            }
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a folder")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["file"])
    }

    @Test("a data folder the server's uid cannot write stops start-up with one line naming the folder and the uid")
    func unwritableDataFolder() async throws {
        let directory = TemporaryDirectory()
        let data = directory.file("data")
        #expect(mkdir(data, 0o755) == 0)  // owned by the test's user: not writable by nobody
        #expect(chmod(directory.path, 0o755) == 0)
        if getuid() != 0 { #expect(chmod(data, 0o555) == 0) }
        defer { chmod(data, 0o755) }
        let serve = ["serve", "--port", "0", "--threads", "1", "--admin-token", "an-operator-token-0123456789"]
        let (status, errors, uid) = try await Self.runUnprivileged(serve + ["--data-dir", data])
        #expect(status == 2)
        #expect(
            errors
                == "tab-server: --data-dir \(data) is not writable: permission denied; make \(data) writable by uid \(uid) (the user tab-server runs as)\n"
        )
        // A data folder to create inside it: the parent is the folder to fix.
        let (nestedStatus, nested, _) = try await Self.runUnprivileged(serve + ["--data-dir", data + "/sub"])
        #expect(nestedStatus == 2)
        #expect(
            nested
                == "tab-server: cannot create --data-dir \(data)/sub: permission denied; make \(data) writable by uid \(uid) (the user tab-server runs as)\n"
        )
        // demo creates the database too, so it says the same.
        let (demoStatus, demo, _) = try await Self.runUnprivileged(["demo", "--data-dir", data])
        #expect(demoStatus == 2)
        #expect(demo.contains("make \(data) writable by uid \(uid)") && demo.split(separator: "\n").count == 1, "\(demo)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data).isEmpty)
    }
}
