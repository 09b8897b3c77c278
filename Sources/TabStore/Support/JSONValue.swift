/// A parsed JSON document: what request bodies are decoded from and responses are encoded to.
///
/// The service uses its own small JSON layer instead of `Codable` so that unknown fields, duplicate keys,
/// wrong types and nesting depth are all refused with an exact JSON pointer (RFC 6901), and so that object
/// keys keep a stable order in responses.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A short name of the value's type, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object that keeps its members in insertion order.
package struct JSONObject: Sendable, Equatable {
    package private(set) var members: [(key: String, value: JSONValue)] = []

    package init() {}

    /// Members in order; a repeated key keeps its first position and its last value. Linear in the member
    /// count (a subscript assignment per member would be quadratic for the thousands of entries a document has).
    package init(_ members: [(String, JSONValue)]) {
        if members.count <= SeenIdentifiers.few {
            for (key, value) in members { self[key] = value }  // a few: found in place, no hashing
            return
        }
        var positions: [Identifier: Int] = [:]
        positions.reserveCapacity(members.count)
        self.members.reserveCapacity(members.count)
        for (key, value) in members {
            if let position = positions[Identifier(key)] {
                self.members[position].value = value
            } else {
                positions[Identifier(key)] = self.members.count
                self.members.append((key, value))
            }
        }
    }

    package var keys: [String] { members.map(\.key) }

    /// Members are found by the exact bytes of their names (see `Identifier`), never by canonical equivalence.
    package subscript(key: String) -> JSONValue? {
        get { members.first(where: { Identifier($0.key) == Identifier(key) })?.value }
        set {
            if let index = members.firstIndex(where: { Identifier($0.key) == Identifier(key) }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// Appends without checking for an existing key; the parser uses it after its own duplicate check.
    mutating func appendUnchecked(_ key: String, _ value: JSONValue) { members.append((key, value)) }

    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { Identifier($0.key) == Identifier($1.key) && $0.value == $1.value }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int) { self = .integer(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    package init(nilLiteral: ()) { self = .null }
}
