import Glibc

/// Structured logging: one JSON object per line on standard error. Never given bodies, tokens or secrets.
package final class Logger: Sendable {
    package enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        package var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }

        package init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }

        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    package let minimum: Level
    private let fd: Int32
    /// Serializes writes so lines from different threads never interleave.
    private let lock = Locked(())

    package init(minimum: Level = .info, fd: Int32 = 2) {
        self.minimum = minimum
        self.fd = fd
    }

    /// A logger that writes nothing (tests).
    package static let silent = Logger(minimum: .error, fd: -1)

    package func log(_ level: Level, _ event: String, _ fields: [(String, JSONValue)] = []) {
        guard level >= minimum, fd >= 0 else { return }
        var object = JSONObject([("ts", .string(Timestamp.now())), ("level", .string(level.name)), ("event", .string(event))])
        for (key, value) in fields { object[key] = Self.bounded(value) }
        var line = JSONWriter.bytes(.object(object))
        line.append(0x0A)
        lock.withLock { _ in
            line.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }
    }

    /// The most bytes of one logged string. Fields may carry what a client sent (a path, a header, a
    /// method, an error message quoting input); bounding them here means no caller can forget, and a
    /// client cannot make one request produce megabytes of log. JSON escaping keeps them on one line.
    package static let maxValueBytes = 256

    /// `value` with every string (also inside arrays and objects) cut to `maxValueBytes` UTF-8 bytes.
    static func bounded(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): .string(truncated(text))
        case .array(let items): .array(items.map(bounded))
        case .object(let object): .object(JSONObject(object.members.map { ($0.key, bounded($0.value)) }))
        default: value
        }
    }

    /// The longest prefix of `text` of at most `maxValueBytes` UTF-8 bytes that ends on a character
    /// boundary (never half a UTF-8 sequence), followed by "…" when something was cut.
    static func truncated(_ text: String) -> String { ClientText.excerpt(text, maxBytes: maxValueBytes) }

    package func info(_ event: String, _ fields: [(String, JSONValue)] = []) { log(.info, event, fields) }
    package func warning(_ event: String, _ fields: [(String, JSONValue)] = []) { log(.warning, event, fields) }
    package func error(_ event: String, _ fields: [(String, JSONValue)] = []) { log(.error, event, fields) }
}
