/// One problem with a document or a change: where it is, a stable kebab-case code a client can switch on,
/// and a sentence for people.
package struct Violation: Sendable, Equatable, CustomStringConvertible {
    package let location: ViolationLocation
    package let code: ViolationCode
    package let detail: String

    package init(location: ViolationLocation, code: ViolationCode, detail: String) {
        self.location = location
        self.code = code
        self.detail = detail
    }

    /// A violation a decoder found at an RFC 6901 pointer it built while reading the document.
    package init(pointer: String, code: ViolationCode, detail: String) {
        self.init(location: .pointer(pointer), code: code, detail: detail)
    }

    package var description: String { "\(location) [\(code.rawValue)] \(detail)" }
}

/// A request document that is not the expected shape: syntax, unknown field, wrong type (HTTP 400).
package struct MalformedDocument: Error, Sendable, Equatable {
    package let violations: [Violation]
    package init(_ violations: [Violation]) { self.violations = violations }
    package init(pointer: String, code: ViolationCode = .invalidType, detail: String) {
        self.violations = [Violation(pointer: pointer, code: code, detail: detail)]
    }
}

/// A well-formed document or change that the tab schema's rules refuse (HTTP 422).
package struct RuleRefusal: Error, Sendable, Equatable {
    package let violations: [Violation]
    package init(_ violations: [Violation]) { self.violations = violations }
}

/// Builds RFC 6901 JSON pointers.
package enum JSONPointer {
    /// Appends one reference token, escaping `~` and `/`.
    package static func append(_ base: String, _ token: String) -> String {
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

    package static func append(_ base: String, _ index: Int) -> String { base + "/" + String(index) }
}
