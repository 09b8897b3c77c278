import TabStoreSupport

/// Parsing `If-Match` and `If-None-Match` field values into an `EntityTagCondition` (TabStoreSupport).
extension EntityTagCondition {
    /// Parses every field line of one precondition header, combined as one list (RFC 9110 §5.3).
    /// Returns nil when the header is absent; throws when it is malformed.
    /// - Throws: `EntityTagCondition.Malformed`.
    package static func parse(_ fieldValues: [String]) throws(Malformed) -> EntityTagCondition? {
        guard !fieldValues.isEmpty else { return nil }
        var tags: [EntityTag] = []
        var sawStar = false
        for value in fieldValues {
            let trimmed = value.trimmingOWS()
            if trimmed == "*" {
                sawStar = true
                continue
            }
            tags += try parseList(Array(trimmed.utf8))
        }
        // `*` stands alone: mixed with entity-tags (or repeated) the field is not `"*" / #entity-tag`.
        if sawStar {
            guard tags.isEmpty, fieldValues.count == 1 else { throw Malformed() }
            return .any
        }
        // An empty list is grammatical (`#entity-tag` allows zero members, RFC 9110 §5.6.1): it names no
        // representation, so `If-Match` with it fails and `If-None-Match` with it passes.
        return .tags(tags)
    }

    package struct Malformed: Error, Sendable, Equatable {}

    /// `#entity-tag`: comma-separated, optional whitespace around members, empty members allowed (§5.6.1).
    /// Commas may occur inside an opaque-tag, so the list is scanned, never split.
    private static func parseList(_ bytes: [UInt8]) throws(Malformed) -> [EntityTag] {
        var tags: [EntityTag] = []
        var index = 0
        func skipOWS() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
        while true {
            skipOWS()
            if index == bytes.count { break }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            var weak = false
            if bytes[index] == UInt8(ascii: "W"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                weak = true
                index += 2
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed() }
            index += 1
            let start = index
            // etagc = %x21 / %x23-7E / obs-text
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                let byte = bytes[index]
                guard byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80 else { throw Malformed() }
                index += 1
            }
            guard index < bytes.count else { throw Malformed() }  // no closing quote
            guard let opaque = String(validating: bytes[start..<index], as: UTF8.self) else { throw Malformed() }
            tags.append(EntityTag(opaque, weak: weak))
            index += 1
            skipOWS()
            guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else { throw Malformed() }
        }
        return tags
    }
}
