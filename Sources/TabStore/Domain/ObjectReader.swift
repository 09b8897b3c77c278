import TabStoreSupport
/// Reads the members of one JSON object with exact pointers in every error,
/// and refuses members it was not asked for (docs/api.md "Conventions": unknown fields are a 400).
package struct ObjectReader {
    let object: JSONObject
    let pointer: String

    /// - Throws: `MalformedDocument` when `value` is not an object.
    package init(_ value: JSONValue, at pointer: String) throws(MalformedDocument) {
        guard case .object(let object) = value else {
            throw MalformedDocument(pointer: pointer, detail: "expected an object, found \(value.typeName)")
        }
        self.object = object
        self.pointer = pointer
    }

    func path(_ key: String) -> String { JSONPointer.append(pointer, key) }

    /// Refuses any member whose name is not in `allowed`.
    package func rejectUnknown(_ allowed: [String]) throws(MalformedDocument) {
        // By bytes, like every member lookup: a name canonically equivalent to an allowed one is unknown. A few
        // names against a few: compared in place (sets of them cost a PATCH more than its decoding did).
        var unknown: [String] = []
        for member in object.members where !allowed.contains(where: { Identifier($0) == Identifier(member.key) }) {
            unknown.append(member.key)
        }
        guard unknown.isEmpty else {
            throw MalformedDocument(unknown.map {
                Violation(pointer: path($0), code: .unknownField, detail: "unknown field \(ClientText.quoted($0))")
            })
        }
    }

    /// A member that is absent or `null` reads as nil.
    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(MalformedDocument) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else {
            throw MalformedDocument(pointer: path(key), detail: "expected a string, found \(value.typeName)")
        }
        return text
    }

    package func requiredString(_ key: String) throws(MalformedDocument) -> String {
        guard let text = try string(key) else {
            throw MalformedDocument(pointer: path(key), code: .missingField, detail: "\"\(key)\" is required")
        }
        return text
    }

    func bool(_ key: String) throws(MalformedDocument) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else {
            throw MalformedDocument(pointer: path(key), detail: "expected a boolean, found \(value.typeName)")
        }
        return flag
    }

    package func integer(_ key: String) throws(MalformedDocument) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .integer(let number) = value else {
            throw MalformedDocument(pointer: path(key), detail: "expected an integer, found \(value.typeName)")
        }
        return number
    }

    /// Checks that a member, when present, is an integer in JSON Schema's sense: a number without a fractional part,
    /// whatever its size or spelling (`3`, `3.0`, `1e30`). For members that are only type-checked, never used.
    func requireIntegral(_ key: String) throws(MalformedDocument) {
        guard let value = value(key) else { return }
        switch value {
        case .integer: return
        case .number(let number) where number.isFinite && number.rounded(.towardZero) == number: return
        default: throw MalformedDocument(pointer: path(key), detail: "expected an integer, found \(value.typeName)")
        }
    }

    func array(_ key: String) throws(MalformedDocument) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let items) = value else {
            throw MalformedDocument(pointer: path(key), detail: "expected an array, found \(value.typeName)")
        }
        return items
    }

    func stringArray(_ key: String) throws(MalformedDocument) -> [String]? {
        guard let items = try array(key) else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                throw MalformedDocument(pointer: JSONPointer.append(path(key), index), detail: "expected a string, found \(item.typeName)")
            }
            strings.append(text)
        }
        return strings
    }

    /// An array of ids; with `checked` (request rules) at most `max` of them, each a valid client id.
    func identifierArray(_ key: String, checked: Bool, max: Int) throws(MalformedDocument) -> [Identifier]? {
        guard let items = try array(key) else { return nil }
        if checked { try Customization.checkCount(items.count, max: max, at: path(key)) }
        var ids: [Identifier] = []
        ids.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                throw MalformedDocument(pointer: JSONPointer.append(path(key), index), detail: "expected a string, found \(item.typeName)")
            }
            let id = Identifier(text)
            if checked { try Customization.checkId(id, at: JSONPointer.append(path(key), index)) }
            ids.append(id)
        }
        return ids
    }

    /// A required id member, checked against the client id rules.
    func requiredIdentifier(_ key: String) throws(MalformedDocument) -> Identifier {
        let id = Identifier(try requiredString(key))
        try Customization.checkId(id, at: path(key))
        return id
    }

    func nested(_ key: String) throws(MalformedDocument) -> ObjectReader? {
        guard let value = value(key) else { return nil }
        return try ObjectReader(value, at: path(key))
    }

    /// Reads a string member as one of an enum's raw values; an unknown value is reported to `problems`
    /// (the caller decides whether that is a 400 or a rule violation) and reads as nil.
    func enumValue<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type, problems: inout [Violation]) throws(MalformedDocument) -> E?
    where E.RawValue == String {
        guard let raw = try string(key) else { return nil }
        guard let value = E(rawValue: raw) else {
            let allowed = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            problems.append(Violation(pointer: path(key), code: .invalidValue, detail: "\(ClientText.quoted(raw)) is not one of \(allowed)"))
            return nil
        }
        return value
    }

    /// Like `enumValue(_:_:problems:)` but an unknown value is a malformed document.
    func strictEnum<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(MalformedDocument) -> E?
    where E.RawValue == String {
        var problems: [Violation] = []
        let value = try enumValue(key, type, problems: &problems)
        if !problems.isEmpty { throw MalformedDocument(problems) }
        return value
    }
}
