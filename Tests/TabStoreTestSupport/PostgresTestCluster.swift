import Foundation
import Glibc
@testable import TabStorePostgres
@testable import TabStoreStorage
@testable import TabStoreStore
@testable import TabStoreSupport

/// A throwaway PostgreSQL cluster for the whole test run: `initdb` and `pg_ctl` in a temporary folder on a
/// free loopback port (as `nobody` when the tests run as root: PostgreSQL refuses to run as root), password
/// authentication over TCP, stopped and removed when the test process exits. Each test gets a fresh database.
///
/// Without PostgreSQL binaries the PostgreSQL half of the parameterized suites is skipped with a loud
/// message, unless `TABSTORE_REQUIRE_POSTGRES=1` (CI), which makes it fail instead.
package final class PostgresTestCluster: Sendable {
    package let port: Int
    package let root: String
    package let binaries: String
    package static let user = "tabstore"
    package static let password = "test-password-0123"

    /// Started on first use; nil when no binaries exist (and they are not required).
    package static let shared: PostgresTestCluster? = {
        guard let binaries = findBinaries() else {
            if ProcessInfo.processInfo.environment["TABSTORE_REQUIRE_POSTGRES"] == "1" {
                fatalError("TABSTORE_REQUIRE_POSTGRES=1 but no PostgreSQL binaries (initdb, pg_ctl) were found: install postgresql")
            }
            let banner = String(repeating: "!", count: 100)
            FileHandle.standardError.write(
                Data(
                    "\n\(banner)\n!!! SKIPPING every PostgreSQL test: no initdb/pg_ctl found (apt-get install postgresql). Only SQLite was tested.\n\(banner)\n\n"
                        .utf8))
            return nil
        }
        do {
            return try PostgresTestCluster(binaries: binaries)
        } catch {
            fatalError("cannot start the test PostgreSQL cluster: \(error)")
        }
    }()

    /// The backends a parameterized test runs on.
    package static var backends: [TestBackend] { shared == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// The newest `/usr/lib/postgresql/N/bin` (Debian), else the folder of `initdb` on PATH.
    package static func findBinaries() -> String? {
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() where FileManager.default.isExecutableFile(atPath: "\(base)/\(version)/bin/pg_ctl") {
            return "\(base)/\(version)/bin"
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            if FileManager.default.isExecutableFile(atPath: "\(folder)/initdb"), FileManager.default.isExecutableFile(atPath: "\(folder)/pg_ctl") {
                return String(folder)
            }
        }
        return nil
    }

    /// A cluster of its own (tests that stop and start the server), removed at exit like the shared one.
    package static func dedicated() throws -> PostgresTestCluster {
        guard let binaries = findBinaries() else { throw Failure("no PostgreSQL binaries") }
        return try PostgresTestCluster(binaries: binaries)
    }

    private init(binaries: String) throws {
        self.binaries = binaries
        var template = Array("/tmp/tabstore-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        root = String(cString: made)
        // PostgreSQL refuses to run as root: the cluster belongs to `nobody` then, which must own its folder.
        let asRoot = geteuid() == 0
        if asRoot {
            guard let nobody = getpwnam("nobody") else { throw Failure("no user nobody to run PostgreSQL as") }
            chown(root, nobody.pointee.pw_uid, nobody.pointee.pw_gid)
            chmod(root, 0o755)
        }
        let passwordFile = root + "/password"
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        if asRoot, let nobody = getpwnam("nobody") { chown(passwordFile, nobody.pointee.pw_uid, nobody.pointee.pw_gid) }
        try Self.run(binaries + "/initdb", ["-D", root + "/data", "-U", Self.user, "--pwfile=" + passwordFile, "--auth-local=trust",
                                            "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"], asRoot: asRoot)
        var started: Int?
        for _ in 0..<5 {
            let port = Self.freePort()
            // fsync off: the tests check TabStore's transactions, not the disk; many connections for parallel tests.
            let settings = "-p \(port) -k \(root) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400 -c shared_buffers=32MB"
            if (try? Self.run(
                binaries + "/pg_ctl", ["-D", root + "/data", "-l", root + "/server.log", "-o", settings, "-w", "-t", "30", "start"], asRoot: asRoot))
                != nil
            {
                started = port
                break
            }
        }
        guard let started else { throw Failure("pg_ctl start failed; see \(root)/server.log") }
        port = started
        Self.stopAtExit(dataDirectory: root + "/data", root: root)
    }

    /// A URL for a fresh, empty database of its own.
    package func freshDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.replacing("-", with: "").lowercased()
        let admin = try PostgresConnection(conninfo: url(database: "postgres"))
        try admin.execute("CREATE DATABASE \(name)")
        return url(database: name)
    }

    package func url(database: String, password: String = PostgresTestCluster.password) -> String {
        "postgres://\(Self.user):\(password)@127.0.0.1:\(port)/\(database)"
    }

    /// Runs `pg_ctl` with `arguments` (as the cluster's owner), e.g. to stop and start the server.
    package func pgCtl(_ arguments: [String]) throws {
        try Self.run(binaries + "/pg_ctl", ["-D", root + "/data"] + arguments, asRoot: geteuid() == 0)
    }

    /// Sends `signal` to the server and every one of its processes (SIGSTOP freezes it as a stuck disk or a
    /// partition looks; SIGCONT thaws it).
    package func signalAll(_ signal: Int32) throws {
        let pidFile = try String(contentsOfFile: root + "/data/postmaster.pid", encoding: .utf8)
        guard let first = pidFile.split(separator: "\n").first, let postmaster = Int32(first) else { throw Failure("no postmaster.pid") }
        var pids = [postmaster]
        // Its children: every /proc entry whose parent is the postmaster.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        for pid in pids { kill(pid, signal) }
    }

    package func start() throws {
        let settings = "-p \(port) -k \(root) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400 -c shared_buffers=32MB"
        try pgCtl(["-l", root + "/server.log", "-o", settings, "-w", "-t", "30", "start"])
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// Runs a program to its end with posix_spawn and waitpid (Foundation's `Process` did not notice the end of
    /// `pg_ctl start`, whose server lives on). Its messages go to a file, not a pipe the server would inherit.
    private static func run(_ executable: String, _ arguments: [String], asRoot: Bool) throws {
        let argv = asRoot ? ["/usr/sbin/runuser", "-u", "nobody", "--", executable] + arguments : [executable] + arguments
        let messages = "/tmp/tabstore-pg-\(UUID().uuidString).err"
        defer { unlink(messages) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, messages, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw Failure("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited, code == 0 else {
            let message = (try? String(contentsOfFile: messages, encoding: .utf8)) ?? ""
            throw Failure("\((executable as NSString).lastPathComponent) failed (status \(status)): \(message)")
        }
    }

    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Where the clusters live, for the exit handler (a C function cannot capture).
    private static let toStop = Locked<[(data: String, root: String)]>([])

    /// At exit: an immediate shutdown of each postmaster (SIGQUIT; nothing in it is worth keeping), then its folder goes.
    private static func stopAtExit(dataDirectory: String, root: String) {
        let first = toStop.withLock { clusters -> Bool in
            clusters.append((dataDirectory, root))
            return clusters.count == 1
        }
        guard first else { return }
        atexit {
            for (data, root) in PostgresTestCluster.toStop.withLock({ $0 }) {
                if let pidText = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
                   let line = pidText.split(separator: "\n").first, let pid = pid_t(line) {
                    kill(pid, SIGQUIT)
                    for _ in 0..<100 where kill(pid, 0) == 0 { usleep(20_000) }
                }
                try? FileManager.default.removeItem(atPath: root)
            }
        }
    }
}

/// The storage engines the conformance suites run on.
package enum TestBackend: String, Sendable, CustomStringConvertible {
    case sqlite, postgres
    package var description: String { rawValue }

    /// A fresh store on this backend; SQLite's file lives in `directory`.
    package func openStore(_ directory: TemporaryDirectory, groupCommit: Bool = true) throws -> any TabStoreBackend {
        switch self {
        case .sqlite:
            var configuration = SQLiteStore.Configuration(path: directory.file("tabstore.sqlite"))
            configuration.groupCommit = groupCommit
            return try SQLiteStore(configuration: configuration)
        case .postgres:
            guard let cluster = PostgresTestCluster.shared else { throw PostgresTestCluster.Failure("no PostgreSQL") }
            var configuration = PostgresStore.Configuration.loadedMachine(url: try cluster.freshDatabase())
            configuration.maxConnections = 6
            return try PostgresStore(configuration: configuration)
        }
    }
}

extension PostgresStore.Configuration {
    /// A store's configuration for tests on a shared, loaded machine. The suites check what the store does,
    /// not how fast a loaded cluster answers: a caller queued behind 60 others on a CI machine running every
    /// suite at once can wait longer than the production default of 5 s (flakes seen in CI), so a caller
    /// may wait up to 60 s for a connection, and its whole bound (RequestDeadline) is the same.
    package static func loadedMachine(url: String) -> Self {
        var configuration = Self(url: url)
        configuration.acquireTimeout = 60
        configuration.statementTimeout = 60
        return configuration
    }
}
