import Dispatch
import Foundation
import TabStore

// tab-server: reads configuration and calls the same builder the tests call. All logic lives in TabStore.

/// One line on standard error, then exit 2: an operator reads it in a terminal or a container log.
func fail(_ message: String) -> Never {
    let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    FileHandle.standardError.write(Data("tab-server: \(line)\n".utf8))
    exit(2)
}

/// An error as a sentence: Foundation's errors (which describe themselves as a dump of their user info)
/// become the path and the reason.
func describe(_ error: any Error) -> String {
    if let cocoa = error as? CocoaError {
        let reason = (cocoa.underlying as? POSIXError).map { String(cString: strerror($0.code.rawValue)) } ?? cocoa.localizedDescription
        return cocoa.filePath.map { "\($0): \(reason)" } ?? reason
    }
    return "\(error)"
}

func run() async {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let options: ServiceOptions
    var rest: [String]
    do {
        (options, rest) = try ServiceOptions.parse(arguments, environment: ProcessInfo.processInfo.environment)
    } catch {
        fail(describe(error))
    }
    // Words that are not the value of a subcommand's option (`token --user -v` names a user).
    let words = rest.indices.filter { $0 == 0 || !["--app", "--user", "--ttl"].contains(rest[$0 - 1]) }.map { rest[$0] }
    if words.contains("--help") || words.contains("-h") || rest.first == "help" {
        print(ServiceOptions.helpText)
        exit(0)
    }
    if words.contains("--version") || words.contains("-v") {
        print("tab-server \(TabStoreVersion.current)")
        exit(0)
    }
    let command = rest.first.map { $0.hasPrefix("--") ? "serve" : $0 } ?? "serve"
    if !rest.isEmpty, rest.first == command { rest.removeFirst() }
    if command != "serve" { ShutdownSignals.restoreDefaults() }
    do {
        switch command {
        case "serve":
            guard rest.isEmpty else { fail("unknown argument \(rest[0]); see tab-server --help") }
            try await Commands.serve(options) {
                // The signal may already be pending (sent while starting): then this returns at once.
                await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                    Thread { continuation.resume(returning: ShutdownSignals.wait()) }.start()
                }
            }
        case "token":
            print(try await Commands.token(options, rest))
        case "backup":
            guard rest.count == 1 else { fail("usage: tab-server backup PATH") }
            try await Commands.backup(options, to: rest[0])
            print("backup written to \(rest[0])")
        case "healthcheck":
            if let failure = HealthCheck.check(host: options.host, port: options.port) {
                FileHandle.standardError.write(Data("tab-server healthcheck: \(failure)\n".utf8))
                exit(1)
            }
            exit(0)
        case "demo":
            for line in try await Commands.demo(options) { print(line) }
        default:
            fail("unknown command \(command); see tab-server --help")
        }
    } catch {
        fail(describe(error))
    }
}

// First, so no signal can arrive before its handler (see ShutdownSignals).
ShutdownSignals.install()
Commands.prepareProcess()
await run()
exit(0)
