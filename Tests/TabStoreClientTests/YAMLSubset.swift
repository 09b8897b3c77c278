import Foundation

/// The YAML that openapi.yaml is written in, read into JSON-like values (`[String: Any]` keeping key order in
/// `YAMLMap`, `[Any]`, `String`, `Int`, `Double`, `Bool`, `NSNull`): block mappings and sequences, flow `{…}` and
/// `[…]` (also over several lines), plain and quoted scalars, `|` and `>` block scalars, full-line comments.
/// No anchors, tags or multi-document streams (openapi.yaml has none); anything else fails loudly.
struct YAMLSubset {
    struct Failure: Error, CustomStringConvertible {
        let line: Int
        let message: String
        var description: String { "openapi.yaml line \(line): \(message)" }
    }

    private let lines: [Substring]
    private var index = 0

    static func parse(_ text: String) throws -> Any {
        var parser = YAMLSubset(lines: text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r") ? line.dropLast() : line
        })
        parser.skipBlank()
        return try parser.block(indent: parser.indentOfCurrent)
    }

    private init(lines: [Substring]) { self.lines = lines }

    private static func indent(_ line: Substring) -> Int { line.prefix { $0 == " " }.count }

    private static func isBlank(_ line: Substring) -> Bool {
        let trimmed = line.drop { $0 == " " }
        return trimmed.isEmpty || trimmed.hasPrefix("#")
    }

    private mutating func skipBlank() {
        while index < lines.count, Self.isBlank(lines[index]) { index += 1 }
    }

    private var indentOfCurrent: Int { index < lines.count ? Self.indent(lines[index]) : 0 }

    private func fail(_ message: String) -> Failure { Failure(line: index + 1, message: message) }

    /// The block (mapping or sequence) whose lines start at column `indent`.
    private mutating func block(indent: Int) throws -> Any {
        skipBlank()
        guard index < lines.count else { return NSNull() }
        let content = lines[index].dropFirst(indent)
        if content.hasPrefix("{") || content.hasPrefix("[") { return try inlineValue(String(content), indent: indent) }
        return content == "-" || content.hasPrefix("- ") ? try sequence(indent: indent) : try mapping(indent: indent, firstLine: nil)
    }

    private mutating func sequence(indent: Int) throws -> [Any] {
        var items: [Any] = []
        while true {
            skipBlank()
            guard index < lines.count, Self.indent(lines[index]) == indent else { break }
            let content = lines[index].dropFirst(indent)
            guard content == "-" || content.hasPrefix("- ") else { break }
            let rest = content.dropFirst(1).drop { $0 == " " }
            if rest.isEmpty {
                index += 1
                skipBlank()
                items.append(try block(indent: indentOfCurrent))
            } else if Self.keyEnd(rest) != nil, !rest.hasPrefix("{"), !rest.hasPrefix("[") {
                // `- key: value`: a mapping whose keys sit at the column after the dash.
                let column = indent + (content.count - rest.count)
                items.append(try mapping(indent: column, firstLine: rest))
            } else {
                items.append(try inlineValue(String(rest), indent: indent))
            }
        }
        return items
    }

    /// Where a `key:` ends (the colon's index) in a line's content, or nil when it is not a key.
    private static func keyEnd(_ text: Substring) -> String.Index? {
        if let quote = text.first, quote == "'" || quote == "\"" {
            guard let close = text.dropFirst().firstIndex(of: quote) else { return nil }
            let after = text.index(after: close)
            return after < text.endIndex && text[after] == ":" ? after : nil
        }
        var position = text.startIndex
        while let colon = text[position...].firstIndex(of: ":") {
            let next = text.index(after: colon)
            if next == text.endIndex || text[next] == " " { return colon }
            position = next
        }
        return nil
    }

    private static func unquoteKey(_ key: Substring) -> String {
        if key.count >= 2, let first = key.first, first == "'" || first == "\"", key.last == first { return String(key.dropFirst().dropLast()) }
        return String(key)
    }

    private mutating func mapping(indent: Int, firstLine: Substring?) throws -> YAMLMap {
        var map = YAMLMap()
        var pending = firstLine
        while true {
            let content: Substring
            if let line = pending {
                content = line
                pending = nil
            } else {
                skipBlank()
                guard index < lines.count, Self.indent(lines[index]) == indent else { break }
                content = lines[index].dropFirst(indent)
                if content.hasPrefix("- ") { break }
            }
            guard let colon = Self.keyEnd(content) else { throw fail("expected a key in \(content)") }
            let key = Self.unquoteKey(content[..<colon])
            let rest = content[content.index(after: colon)...].drop { $0 == " " }
            if rest.isEmpty {
                index += 1
                skipBlank()
                let next = indentOfCurrent
                let nextContent = index < lines.count ? lines[index].dropFirst(next) : ""
                if index < lines.count, next > indent || (next == indent && nextContent.hasPrefix("- ")) {
                    map[key] = try block(indent: next)
                } else {
                    map[key] = NSNull()
                }
            } else if let style = rest.first, style == "|" || style == ">" {
                index += 1
                map[key] = blockScalar(String(rest), parentIndent: indent)
            } else {
                map[key] = try inlineValue(String(rest), indent: indent)
            }
        }
        return map
    }

    /// A `|` or `>` scalar: the lines indented deeper than the parent.
    private mutating func blockScalar(_ header: String, parentIndent: Int) -> String {
        var raw: [Substring] = []
        while index < lines.count {
            let line = lines[index]
            if !line.allSatisfy({ $0 == " " }), Self.indent(line) <= parentIndent { break }
            raw.append(line)
            index += 1
        }
        while let last = raw.last, last.allSatisfy({ $0 == " " }) { raw.removeLast() }
        let column = raw.filter { !$0.allSatisfy { $0 == " " } }.map(Self.indent).min() ?? 0
        let body = raw.map { $0.count >= column ? String($0.dropFirst(column)) : "" }
        var text: String
        if header.hasPrefix(">") {
            text = ""
            for (position, line) in body.enumerated() {
                if position > 0 { text += line.isEmpty || body[position - 1].isEmpty || line.hasPrefix(" ") ? "\n" : " " }
                text += line
            }
        } else {
            text = body.joined(separator: "\n")
        }
        return header.hasSuffix("-") ? text : text + "\n"
    }

    /// A value after `key: ` or `- `: flow collection (possibly continued on the next lines) or scalar.
    private mutating func inlineValue(_ start: String, indent: Int) throws -> Any {
        var text = start
        index += 1
        if text.hasPrefix("{") || text.hasPrefix("[") {
            while FlowParser.depth(text) > 0 {
                guard index < lines.count else { throw fail("unclosed flow collection") }
                text += " " + lines[index].drop { $0 == " " }
                index += 1
            }
            var flow = FlowParser(Array(text.unicodeScalars))
            do {
                return try flow.value()
            } catch let failure as Failure {
                throw Failure(line: index, message: "\(failure.message): \(text)")
            }
        }
        return try FlowParser.scalar(Substring(text), inFlow: false)
    }
}

/// Key order kept, lookups by key.
struct YAMLMap {
    private(set) var keys: [String] = []
    private var values: [String: Any] = [:]

    subscript(key: String) -> Any? {
        get { values[key] }
        set {
            if values[key] == nil { keys.append(key) }
            values[key] = newValue
        }
    }

    /// As plain Foundation values for JSONSerialization.
    var foundation: [String: Any] { values.mapValues(YAMLMap.plain) }

    static func plain(_ value: Any) -> Any {
        switch value {
        case let map as YAMLMap: map.foundation
        case let list as [Any]: list.map(plain)
        default: value
        }
    }
}

/// `{…}` / `[…]` collections and scalars.
struct FlowParser {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    /// How many collections are open at the end of `text` (quotes respected).
    static func depth(_ text: String) -> Int {
        var depth = 0
        var quote: Character?
        var previous: Character = " "  // the last character that was not a space
        for character in text {
            defer { if character != " " { previous = character } }
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"", "{[,: ".contains(previous) {
                quote = character  // quotes open a scalar only at its start (`The app's URL.` is plain)
            } else if character == "{" || character == "[" {
                depth += 1
            } else if character == "}" || character == "]" {
                depth -= 1
            }
        }
        return depth
    }

    static func scalar(_ raw: Substring, inFlow: Bool) throws -> Any {
        let text = raw.trimmingCharacters(in: .whitespaces)
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            return String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
        }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        }
        switch text {
        case "null", "~", "": return NSNull()
        case "true": return true
        case "false": return false
        default: break
        }
        if let integer = Int(text) { return integer }
        if text.contains("."), let double = Double(text), text.first != "." { return double }
        return text
    }

    private mutating func skipSpaces() {
        while position < scalars.count, scalars[position] == " " { position += 1 }
    }

    private func peek() -> Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    mutating func value() throws -> Any {
        skipSpaces()
        switch peek() {
        case "{": return try map()
        case "[": return try list()
        default: return try Self.scalar(Substring(token(stopAtColon: false)), inFlow: true)
        }
    }

    /// A scalar's text up to `,`, `]`, `}` (and `: ` for keys), quotes kept.
    private mutating func token(stopAtColon: Bool) -> String {
        skipSpaces()
        var out = String.UnicodeScalarView()
        if let quote = peek(), quote == "'" || quote == "\"" {
            out.append(quote)
            position += 1
            while let scalar = peek() {
                out.append(scalar)
                position += 1
                if scalar == quote {
                    if quote == "'", peek() == "'" { out.append("'"); position += 1; continue }
                    break
                }
            }
            return String(out)
        }
        while let scalar = peek(), scalar != ",", scalar != "]", scalar != "}" {
            if stopAtColon, scalar == ":", position + 1 >= scalars.count || scalars[position + 1] == " " { break }
            out.append(scalar)
            position += 1
        }
        return String(out)
    }

    private mutating func expect(_ scalar: Unicode.Scalar) throws {
        skipSpaces()
        guard peek() == scalar else { throw YAMLSubset.Failure(line: 0, message: "expected \(scalar) in flow collection at \(position)") }
        position += 1
    }

    private mutating func map() throws -> YAMLMap {
        try expect("{")
        var map = YAMLMap()
        skipSpaces()
        if peek() == "}" { position += 1; return map }
        while true {
            let key = try Self.scalar(Substring(token(stopAtColon: true)), inFlow: true)
            skipSpaces()
            if peek() == "," || peek() == "}" {
                map["\(key)"] = NSNull()  // a key without a value, as YAML reads `{a: b, c}`
            } else {
                try expect(":")
                map["\(key)"] = try value()
            }
            skipSpaces()
            if peek() == "," { position += 1; continue }
            try expect("}")
            return map
        }
    }

    private mutating func list() throws -> [Any] {
        try expect("[")
        var items: [Any] = []
        skipSpaces()
        if peek() == "]" { position += 1; return items }
        while true {
            items.append(try value())
            skipSpaces()
            if peek() == "," { position += 1; continue }
            try expect("]")
            return items
        }
    }
}
