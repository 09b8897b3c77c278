import TabStoreSupport
/// One problem with a document or a change: where it is (an RFC 6901 JSON pointer), a stable
/// kebab-case code a client can switch on, and a sentence for people.
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    public let pointer: String
    public let code: ViolationCode
    public let detail: String

    public init(pointer: String, code: ViolationCode, detail: String) {
        self.pointer = pointer
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(pointer) [\(code.rawValue)] \(detail)" }
}

/// A request document that is not the expected shape: syntax, unknown field, wrong type (HTTP 400).
public struct MalformedDocument: Error, Sendable, Equatable {
    public let violations: [Violation]
    public init(_ violations: [Violation]) { self.violations = violations }
    public init(pointer: String, code: ViolationCode = .invalidType, detail: String) {
        self.violations = [Violation(pointer: pointer, code: code, detail: detail)]
    }
}

/// A well-formed document or change that the tab schema's rules refuse (HTTP 422).
public struct RuleRefusal: Error, Sendable, Equatable {
    public let violations: [Violation]
    public init(_ violations: [Violation]) { self.violations = violations }
}

/// Builds RFC 6901 JSON pointers.
public enum JSONPointer {
    /// Appends one reference token, escaping `~` and `/`.
    public static func append(_ base: String, _ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return base + "/" + token }
        var escaped = ""
        escaped.reserveCapacity(token.utf8.count + 4)
        for character in token {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.append(character)
            }
        }
        return base + "/" + escaped
    }

    public static func append(_ base: String, _ index: Int) -> String { base + "/" + String(index) }
}
