/// Header fields in the order received, repeats kept, looked up case-insensitively (RFC 9110 §5.1).
package struct HTTPHeaders: Sendable, Equatable, Sequence {
    package private(set) var fields: [(name: String, value: String)] = []

    package init() {}

    package init(_ fields: [(String, String)]) {
        for (name, value) in fields { add(name, value) }
    }

    package mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field of this name with one.
    package mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    package mutating func remove(_ name: String) {
        fields.removeAll { Self.equal($0.name, name) }
    }

    /// The first value of the field, if any.
    package subscript(name: String) -> String? {
        fields.first { Self.equal($0.name, name) }?.value
    }

    /// How many fields have this name (no array made, unlike `values`).
    package func count(_ name: String) -> Int {
        fields.reduce(0) { Self.equal($1.name, name) ? $0 + 1 : $0 }
    }

    /// Every value of the field, in order.
    package func values(_ name: String) -> [String] {
        fields.filter { Self.equal($0.name, name) }.map(\.value)
    }

    /// Comma-separated list members of every field of this name, trimmed and lowercased (RFC 9110 §5.6.1).
    package func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    package var count: Int { fields.count }

    package func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// ASCII case-insensitive comparison without allocating.
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        // Most names a lookup passes differ in length: no byte walk for those.
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            let a = left.next()
            let b = right.next()
            guard let a, let b else { return a == nil && b == nil }
            if a == b { continue }
            let lowerA = (a >= 0x41 && a <= 0x5A) ? a | 0x20 : a
            let lowerB = (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b
            if lowerA != lowerB { return false }
        }
    }

    package static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

extension Substring {
    /// Trims optional whitespace (SP / HTAB) from both ends.
    package func trimmingOWS() -> Substring {
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start, utf8[utf8.index(before: end)] == 0x20 || utf8[utf8.index(before: end)] == 0x09 { end = utf8.index(before: end) }
        return self[start..<end]
    }
}

extension String {
    package func trimmingOWS() -> String { String(self[...].trimmingOWS()) }
}
